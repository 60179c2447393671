// Defaults and validation of pool sizes and deadlines.
import { PoolErrors } from './errors';
import type { ConnectionFactory, PoolSizing } from './types';

export type ResolvedSizing = Required<PoolSizing>;

export const POOL_DEFAULTS = {
  reserved: 0,
  minIdle: 0,
  maxWaiters: 1000,
  acquireTimeoutMs: 5_000,
  connectTimeoutMs: 5_000,
  resetTimeoutMs: 5_000,
  idleTimeoutMs: 600_000,
  maxLifetimeMs: 3_600_000,
  sweepIntervalMs: 1_000,
} as const satisfies Omit<ResolvedSizing, 'max'>;

const INTEGER_FIELDS = ['max', 'reserved', 'minIdle', 'maxWaiters'] as const;
const DURATION_FIELDS = [
  'acquireTimeoutMs',
  'connectTimeoutMs',
  'resetTimeoutMs',
  'idleTimeoutMs',
  'maxLifetimeMs',
  'sweepIntervalMs',
] as const;
/** Deadlines that must be positive: 0 would fail every operation. */
const POSITIVE_FIELDS = new Set<string>(['max', 'acquireTimeoutMs', 'connectTimeoutMs', 'resetTimeoutMs', 'sweepIntervalMs']);

/** Fills defaults and checks ranges; throws DBP_ERR_POOL_INVALID_OPTIONS naming the field. */
export function resolveSizing(backend: string, sizing: PoolSizing): ResolvedSizing {
  const resolved: ResolvedSizing = {
    max: sizing.max,
    reserved: sizing.reserved ?? POOL_DEFAULTS.reserved,
    minIdle: sizing.minIdle ?? POOL_DEFAULTS.minIdle,
    maxWaiters: sizing.maxWaiters ?? POOL_DEFAULTS.maxWaiters,
    acquireTimeoutMs: sizing.acquireTimeoutMs ?? POOL_DEFAULTS.acquireTimeoutMs,
    connectTimeoutMs: sizing.connectTimeoutMs ?? POOL_DEFAULTS.connectTimeoutMs,
    resetTimeoutMs: sizing.resetTimeoutMs ?? POOL_DEFAULTS.resetTimeoutMs,
    idleTimeoutMs: sizing.idleTimeoutMs ?? POOL_DEFAULTS.idleTimeoutMs,
    maxLifetimeMs: sizing.maxLifetimeMs ?? POOL_DEFAULTS.maxLifetimeMs,
    sweepIntervalMs: sizing.sweepIntervalMs ?? POOL_DEFAULTS.sweepIntervalMs,
  };
  const problem = (field: string, want: string, value: unknown) =>
    PoolErrors.invalidOptions(backend, `${field} must be ${want}, got ${String(value)}`);
  for (const field of INTEGER_FIELDS) {
    const value = resolved[field];
    const min = POSITIVE_FIELDS.has(field) ? 1 : 0;
    if (!Number.isSafeInteger(value) || value < min) throw problem(field, `an integer >= ${min}`, value);
  }
  for (const field of DURATION_FIELDS) {
    const value = resolved[field];
    const positive = POSITIVE_FIELDS.has(field);
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (positive && value === 0)) {
      throw problem(field, positive ? 'a number of ms > 0' : 'a number of ms >= 0', value);
    }
  }
  if (resolved.minIdle > resolved.max + resolved.reserved) {
    throw problem('minIdle', `at most max + reserved (${resolved.max + resolved.reserved})`, resolved.minIdle);
  }
  return resolved;
}

/** A factory must at least open and close connections. */
export function checkFactory<C>(backend: string, factory: ConnectionFactory<C> | undefined): void {
  if (typeof factory?.create !== 'function' || typeof factory.destroy !== 'function') {
    throw PoolErrors.invalidOptions(backend, 'factory needs create() and destroy()');
  }
}
