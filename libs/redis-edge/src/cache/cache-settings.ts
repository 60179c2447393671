// [redis.cache] as the reply cache reads it (command mode only).
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export interface CacheSettings {
  readonly enabled: boolean;
  /** Bytes of cached replies (keys, frames and bookkeeping) per process, split between the two generations. */
  readonly maxBytes: number;
  /** Entries older than this are not served (backstop; tracking keeps entries coherent). */
  readonly maxAgeMs: number;
  /** consistency = "strict" (default): hits wait for a tracker barrier; "bounded": served at once. */
  readonly strict: boolean;
  /** A tracker whose PING is unanswered this long (redis.command_timeout_seconds) is closed: its hits read the server. */
  readonly barrierTimeoutMs: number;
}

export function cacheSettingsOf(config: DeepReadonly<DbproxyConfig>): CacheSettings {
  const c = config.redis.cache;
  return { enabled: config.redis.mode === 'command' && c.enabled, maxBytes: c.max_bytes, maxAgeMs: c.max_age_seconds * 1000, strict: c.consistency === 'strict', barrierTimeoutMs: config.redis.command_timeout_seconds * 1000 };
}
