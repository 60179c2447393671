// Admin JSON in one style: snake_case keys, applied at the HTTP boundary to bodies built from
// camelCase bus and service types (topology snapshots, XA scans). Keys of maps keyed by data
// (backend, shard, host or deployment names) are left as they are; their values are converted.

/** `lastCheck` → `last_check`, `latencyMs` → `latency_ms`; snake_case keys stay as they are. */
export function snakeCaseKey(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z])([A-Z][a-z])/g, '$1_$2').toLowerCase();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `value` with every object key in snake_case. `dataMaps` names the (snake_case) keys
 * whose value is a map keyed by data: its own keys are kept, the values under them converted.
 */
export function snakeCaseKeys(value: unknown, dataMaps: ReadonlySet<string> = new Set()): unknown {
  if (Array.isArray(value)) return value.map((v) => snakeCaseKeys(v, dataMaps));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = snakeCaseKey(key);
    out[name] = dataMaps.has(name) && isPlainObject(v) ? keepKeys(v, dataMaps) : snakeCaseKeys(v, dataMaps);
  }
  return out;
}

function keepKeys(map: Record<string, unknown>, dataMaps: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(map)) out[key] = snakeCaseKeys(v, dataMaps);
  return out;
}
