// Transaction mode's tracked startup parameters (PgBouncer's track_extra_parameters): what a client's
// StartupMessage (and every `-c name=value` / `--name=value` in its `options`) asks of its session,
// applied to each pooled connection before the session's statements run there; unknown direct
// parameters are refused unless listed in [postgres] ignore_startup_parameters.
import { splitStartupOptions, startupOptionSettings, type StartupMessage } from '@dbproxy/protocol-pg';
import { PgEdgeErrors } from '../errors';

/** Tracked parameters, by lower-case name: the name as PostgreSQL spells it (and reports it in ParameterStatus). */
const TRACKED = new Map<string, string>(
  [
    'application_name',
    'client_encoding',
    'DateStyle',
    'IntervalStyle',
    'TimeZone',
    'standard_conforming_strings',
    'statement_timeout',
    'search_path',
    'idle_in_transaction_session_timeout',
    'extra_float_digits',
  ].map((name) => [name.toLowerCase(), name]),
);

/** A GUC name as PostgreSQL spells one (lower case; a custom one has a dotted prefix): it is written into RESET unquoted. */
const SETTING_NAME = /^[a-z_][a-z0-9_$]*(\.[a-z_][a-z0-9_$]*)*$/;

/** Startup parameters that are no setting: the session's identity. */
const IDENTITY = new Set(['user', 'database']);

/** The settings a session asked for: PostgreSQL's spelling of each name → the value as the client gave it. */
export type RequestedSettings = ReadonlyMap<string, string>;

export type StartupSettings = { readonly ok: true; readonly settings: RequestedSettings } | { readonly ok: false; readonly error: Error };

/**
 * The tracked settings of a startup (the shard key already taken out). As on the server, a
 * parameter given directly wins over the same one in `options`; `fallback_application_name` is
 * used when there is no `application_name`. Anything else is refused unless `ignored` lists it.
 */
export function startupSettings(startup: StartupMessage, ignoreStartupParameters: readonly string[]): StartupSettings {
  const ignored = new Set(ignoreStartupParameters.map((name) => name.toLowerCase()));
  const fromOptions = new Map<string, string>();
  const direct = new Map<string, string>();
  let fallbackName: string | undefined;
  for (const [name, value] of startup.parameters) {
    const key = name.toLowerCase();
    if (IDENTITY.has(key)) continue;
    if (key === 'fallback_application_name') {
      fallbackName = value;
      continue;
    }
    if (key === 'options') {
      if (ignored.has('options')) continue;
      const error = readOptions(value, ignored, fromOptions);
      if (error) return { ok: false, error };
      continue;
    }
    const tracked = TRACKED.get(key);
    if (tracked) direct.set(tracked, value);
    else if (!ignored.has(key)) return { ok: false, error: PgEdgeErrors.startupParameterUnknown(name) };
  }
  const settings = new Map([...fromOptions, ...direct]);
  // every session names its application (as PostgreSQL shows '' for one that did not)
  if (!settings.has('application_name')) settings.set('application_name', fallbackName ?? '');
  return { ok: true, settings };
}

function readOptions(options: string, ignored: ReadonlySet<string>, into: Map<string, string>): Error | undefined {
  const args = splitStartupOptions(options);
  const covered = new Set<number>();
  for (const setting of startupOptionSettings(args)) {
    setting.indexes.forEach((i) => covered.add(i));
    const tracked = TRACKED.get(setting.name);
    if (tracked) into.set(tracked, setting.value);
    else if (ignored.has(setting.name)) continue;
    // any other setting in options is tracked too: PostgreSQL checks it (name, value, whether it may
    // be set after connection start) when the session starts, and the edge applies it per unit
    else if (SETTING_NAME.test(setting.name)) into.set(setting.name, setting.value);
    else return PgEdgeErrors.startupParameterUnknown(`-c ${setting.name}`);
  }
  const other = args.find((_, i) => !covered.has(i));
  return other === undefined ? undefined : PgEdgeErrors.startupParameter('options', other.slice(0, 64));
}

/**
 * The simple Query that moves a connection from the settings it has (`from`, as applied by
 * earlier sessions; absent = the connection's own default) to `to`: set_config for values that
 * differ (lists such as search_path and DateStyle are read as PostgreSQL reads them), RESET for
 * settings `to` leaves at their default. Undefined when nothing differs.
 */
export function settingsChange(from: RequestedSettings, to: RequestedSettings): string | undefined {
  const sets: string[] = [];
  for (const [name, value] of to) if (from.get(name) !== value) sets.push(`set_config(${literal(name)}, ${literal(value)}, false)`);
  const resets: string[] = [];
  for (const name of from.keys()) if (!to.has(name)) resets.push(`RESET ${name}`);
  if (sets.length === 0 && resets.length === 0) return undefined;
  return [...(sets.length > 0 ? [`SELECT ${sets.join(', ')}`] : []), ...resets].join('; ');
}

/** A string literal whatever standard_conforming_strings is: E'' with quotes and backslashes doubled. */
function literal(value: string): string {
  return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The SQL that checks and canonicalizes requested values without keeping them (set_config local to its own implicit transaction). */
export function canonicalizingQuery(settings: RequestedSettings): { readonly sql: string; readonly names: readonly string[] } {
  const names = [...settings.keys()];
  return { sql: `SELECT ${names.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, true)`).join(', ')}`, names };
}
