// Keys of features this build does not implement yet: `validate` refuses them when a document
// sets them to anything but their default, so a key that validates always does what it says.
import type { ConfigIssue } from './issues';
import { configSchema, type DbproxyConfig } from './schema/root';
import { defaultAt } from './schema/walk';

export const NOT_BUILT = 'not implemented in this build yet';

export interface NotBuiltKey {
  /** Schema key path (`[]` = every element); the key and every key under it are refused. */
  readonly path: string;
  /** Where the feature lands, shown in the message. */
  readonly lands: string;
}

/** The reviewed list: no service of this build reads these keys. */
export const NOT_BUILT_KEYS: readonly NotBuiltKey[] = [];

const jsonOf = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
const isTable = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Concrete occurrences of a key path in a value: `redis_backends[].tls` → `redis_backends[0].tls`, ... */
function occurrences(value: unknown, steps: readonly string[], at: string): { path: string; value: unknown }[] {
  const [step, ...rest] = steps;
  if (step === undefined) return [{ path: at, value }];
  if (step === '[]') return Array.isArray(value) ? value.flatMap((v, i) => occurrences(v, rest, `${at}[${i}]`)) : [];
  return isTable(value) ? occurrences(value[step], rest, at === '' ? step : `${at}.${step}`) : [];
}

/** Paths under `path` whose values differ from the defaults (one per changed key of a table). */
function changed(path: string, value: unknown, fallback: unknown): string[] {
  if (jsonOf(value) === jsonOf(fallback)) return [];
  if (!isTable(value) || !isTable(fallback)) return [path];
  return [...new Set([...Object.keys(value), ...Object.keys(fallback)])].flatMap((k) => changed(`${path}.${k}`, value[k], fallback[k]));
}

/** One issue per key of a not-built feature that the configuration sets. */
export function checkNotBuilt(c: DbproxyConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const key of NOT_BUILT_KEYS) {
    const fallback = defaultAt(configSchema, key.path);
    for (const found of occurrences(c, key.path.match(/\[\]|[^.[\]]+/g) ?? [], '')) {
      for (const path of changed(found.path, found.value, fallback)) issues.push({ path, message: `${NOT_BUILT} (${key.lands})` });
    }
  }
  return issues;
}

/** Keys that one service honours and another does not yet: refused where the gap would show. */
export function checkPartlyBuilt(c: DbproxyConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  c.mysql_backends.forEach((b, i) => {
    if (!b.tls.enabled || (b.tls.ca_path === undefined) === b.tls.use_webpki_roots) return;
    const does = b.tls.ca_path === undefined ? 'trusts the public roots when there is no ca_path' : 'trusts only ca_path when it is set';
    issues.push({ path: `mysql_backends[${i}].tls.use_webpki_roots`, message: `${NOT_BUILT} in mysql-edge (it ${does}); set use_webpki_roots = ${b.tls.ca_path === undefined}` });
  });
  if (c.postgres.read_consistency === 'causal' && c.postgres.routing_mode !== 'transaction') {
    issues.push({ path: 'postgres.read_consistency', message: `"causal" is ${NOT_BUILT} in transparent routing mode (a transparent session stays on one backend; set routing_mode = "transaction")` });
  }
  if (c.redis.enabled && c.proxy.tls.mode === 'required') {
    issues.push({ path: 'proxy.tls.mode', message: `"required" is ${NOT_BUILT} in redis-edge (its listeners do not offer TLS and would accept plaintext clients)` });
  }
  return issues;
}
