// Bounds every scanner enforces, with Redis's own defaults where Redis has one.
import { InvalidLimit } from './errors';

export interface RespLimits {
  /** Largest bulk string, in bytes (Redis proto-max-bulk-len). */
  readonly maxBulkLength: number;
  /** Most arguments in one client command (multibulk count). */
  readonly maxMultibulkLength: number;
  /** Most elements in one reply aggregate (array, set, push; pairs count twice in maps). */
  readonly maxAggregateLength: number;
  /**
   * Deepest nesting of reply aggregates (attributes count as a level). Far above what a server
   * sends (a Lua script's reply stops at Lua's stack limit, about 2,600 levels); the scanner's
   * stack grows with the reply, so a high bound costs nothing for shallow replies.
   */
  readonly maxNestingDepth: number;
  /** Largest pending (incomplete) or complete client command, in bytes (client-query-buffer-limit). */
  readonly queryBufferLimit: number;
  /** Largest pending or complete reply, in bytes. */
  readonly replyBufferLimit: number;
  /** Longest inline command line, in bytes (Redis PROTO_INLINE_MAX_SIZE). */
  readonly maxInlineLength: number;
}

const MiB = 1024 * 1024;
/** Offsets are kept in Int32Arrays, so no bound may exceed this. */
export const MAX_OFFSET = 0x7fffffff;

export const DEFAULT_RESP_LIMITS: RespLimits = Object.freeze({
  maxBulkLength: 512 * MiB,
  maxMultibulkLength: 1024 * 1024,
  maxAggregateLength: MAX_OFFSET,
  maxNestingDepth: 10_000,
  queryBufferLimit: 1024 * MiB,
  replyBufferLimit: 1024 * MiB,
  maxInlineLength: 64 * 1024,
});

/** Fills unset bounds from the defaults and rejects values that are not positive integers. */
export function resolveLimits(overrides: Partial<RespLimits> = {}): RespLimits {
  const limits: RespLimits = { ...DEFAULT_RESP_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits) as Array<[string, number]>) {
    if (!Number.isInteger(value) || value < 1 || value > MAX_OFFSET) {
      throw InvalidLimit(name, `expected an integer from 1 to ${MAX_OFFSET}, got ${String(value)}`);
    }
  }
  return Object.freeze(limits);
}
