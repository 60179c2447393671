// The StartupMessage `options` parameter (command-line style `-c name=value`) and taking a setting out of a startup.
import type { StartupMessage } from './messages';

/** C isspace(): the server splits on these only, not on Unicode spaces. */
const C_SPACE = /[ \t\n\v\f\r]/;

/** Splits `options` the way the server does: whitespace separates, backslash escapes the next character. */
export function splitStartupOptions(options: string): string[] {
  const args: string[] = [];
  let current = '';
  let inArg = false;
  for (let i = 0; i < options.length; i++) {
    const ch = options[i];
    if (ch === '\\') {
      if (i + 1 < options.length) current += options[++i];
      inArg = true;
    } else if (C_SPACE.test(ch)) {
      if (inArg) args.push(current);
      current = '';
      inArg = false;
    } else {
      current += ch;
      inArg = true;
    }
  }
  if (inArg) args.push(current);
  return args;
}

/** Joins arguments into an `options` value, escaping whitespace and backslashes. */
export function joinStartupOptions(args: readonly string[]): string {
  return args.map((arg) => arg.replace(/[\\ \t\n\v\f\r]/g, (ch) => `\\${ch}`)).join(' ');
}

/** GUC names are case-insensitive and `--a-b` means `a_b`. */
function settingName(name: string): string {
  return name.toLowerCase().replace(/-/g, '_');
}

interface OptionSetting {
  readonly name: string;
  readonly value: string;
  /** Indexes in the argument list that carry this setting (`-c` and its value may be two). */
  readonly indexes: readonly number[];
}

/** The `-c name=value`, `-cname=value` and `--name=value` settings in an argument list. */
export function startupOptionSettings(args: readonly string[]): OptionSetting[] {
  const settings: OptionSetting[] = [];
  for (let i = 0; i < args.length; i++) {
    let assignment: string | undefined;
    let indexes = [i];
    if (args[i] === '-c' && i + 1 < args.length) {
      assignment = args[i + 1];
      indexes = [i, i + 1];
      i++;
    } else if (args[i].startsWith('-c')) assignment = args[i].slice(2);
    else if (args[i].startsWith('--')) assignment = args[i].slice(2);
    const eq = assignment?.indexOf('=') ?? -1;
    if (assignment !== undefined && eq > 0) {
      settings.push({ name: settingName(assignment.slice(0, eq)), value: assignment.slice(eq + 1), indexes });
    }
  }
  return settings;
}

export interface TakenSetting {
  /** The setting's value (a direct parameter wins over `options`, as on the server); undefined when absent. */
  readonly value: string | undefined;
  /** The startup without any trace of the setting, ready to forward. */
  readonly message: StartupMessage;
}

/**
 * Removes a setting from a StartupMessage wherever the client put it: as its own parameter or
 * inside `options`. Used to strip dbproxy's shard selector before forwarding a startup.
 */
export function takeStartupSetting(message: StartupMessage, name: string): TakenSetting {
  const wanted = settingName(name);
  const parameters = new Map<string, string>();
  let direct: string | undefined;
  let fromOptions: string | undefined;
  for (const [key, value] of message.parameters) {
    if (key !== 'options' && settingName(key) === wanted) {
      direct = value;
      continue;
    }
    if (key === 'options') {
      const args = splitStartupOptions(value);
      const drop = new Set<number>();
      for (const setting of startupOptionSettings(args)) {
        if (setting.name !== wanted) continue;
        fromOptions = setting.value;
        setting.indexes.forEach((i) => drop.add(i));
      }
      const kept = args.filter((_, i) => !drop.has(i));
      if (drop.size === 0) parameters.set(key, value);
      else if (kept.length > 0) parameters.set(key, joinStartupOptions(kept));
      continue;
    }
    parameters.set(key, value);
  }
  return { value: direct ?? fromOptions, message: { ...message, parameters } };
}
