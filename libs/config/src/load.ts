// Reading a configuration: TOML text → raw document → `${ENV}` expansion → schema → rules.
import { readFileSync } from 'node:fs';
import { errorMessage } from '@dbproxy/util';
import { expandEnvironment, type Environment } from './env';
import { ConfigReadFailed } from './errors';
import { fromZodIssues, type ConfigIssue } from './issues';
import { checkBus } from './bus-rules';
import { checkBusIdentities } from './bus-identity-rules';
import { checkListeners } from './listeners';
import { checkRules } from './rules';
import { configSchema, type DbproxyConfig } from './schema/root';
import { checkNotBuilt, checkPartlyBuilt } from './unbuilt';

// smol-toml ships ESM type declarations; its CommonJS build is what Node loads here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parse, TomlError }: typeof import('smol-toml', { with: { 'resolution-mode': 'import' } }) = require('smol-toml');

/** A configuration document as written (placeholders unexpanded), JSON-safe. */
export type RawDocument = Record<string, unknown>;

export type ValidationResult = { ok: true; config: DbproxyConfig } | { ok: false; issues: ConfigIssue[] };

/** Integers too large for a double arrive as bigint; keep them as decimal strings (JSON-safe). */
function toJsonSafe(node: unknown): unknown {
  if (typeof node === 'bigint') return node.toString();
  if (node instanceof Date) return node.toISOString();
  if (Array.isArray(node)) return node.map(toJsonSafe);
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, toJsonSafe(v)]));
  }
  return node;
}

/** Parses TOML into a raw document, or one issue naming the line and column. */
export function parseToml(text: string): { ok: true; document: RawDocument } | { ok: false; issues: ConfigIssue[] } {
  try {
    return { ok: true, document: toJsonSafe(parse(text, { integersAsBigInt: 'asNeeded' })) as RawDocument };
  } catch (err) {
    const where = err instanceof TomlError ? `line ${err.line}, column ${err.column}: ` : '';
    const message = errorMessage(err).split('\n')[0] ?? 'invalid TOML';
    return { ok: false, issues: [{ path: '(document)', message: `${where}${message.replace(/^Invalid TOML document: /, '')}` }] };
  }
}

/** Expands, validates and checks a raw document; reports every issue at once. */
export function validateDocument(document: unknown, env: Environment): ValidationResult {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    return { ok: false, issues: [{ path: '(document)', message: 'expected a table of sections' }] };
  }
  const expanded = expandEnvironment(document, env);
  const parsed = configSchema.safeParse(expanded.value);
  if (!parsed.success) return { ok: false, issues: [...expanded.issues, ...fromZodIssues(parsed.error.issues)] };
  const issues = [...expanded.issues, ...checkNotBuilt(parsed.data), ...checkPartlyBuilt(parsed.data), ...checkRules(parsed.data), ...checkListeners(parsed.data), ...checkBus(parsed.data), ...checkBusIdentities(parsed.data)];
  return issues.length > 0 ? { ok: false, issues } : { ok: true, config: parsed.data };
}

/** Reads a TOML file into a raw document; throws DBP_ERR_CONFIG_READ when unreadable. */
export function readRawDocument(path: string): { ok: true; document: RawDocument } | { ok: false; issues: ConfigIssue[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw ConfigReadFailed.withCause(err, path, errorMessage(err));
  }
  return parseToml(text);
}

/** The process environment: libs/config is the one place that reads it. */
export function processEnvironment(): Environment {
  return process.env;
}

/** Reads and validates a file against the process environment (or `env`). */
export function loadConfigFile(path: string, env: Environment = processEnvironment()): ValidationResult & { document?: RawDocument } {
  const raw = readRawDocument(path);
  if (!raw.ok) return raw;
  return { ...validateDocument(raw.document, env), document: raw.document };
}
