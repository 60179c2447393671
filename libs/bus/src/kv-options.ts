// KV bucket options shared by both buses, with JetStream's limits.
import { BusErrors } from './errors';
import type { KvOptions } from './types';

/** JetStream KV keeps at most 64 revisions per key. */
export const MAX_KV_HISTORY = 64;

export function historyOf(bucket: string, opts: KvOptions | undefined): number {
  const history = opts?.history ?? 1;
  if (!Number.isInteger(history) || history < 1 || history > MAX_KV_HISTORY) {
    throw BusErrors.kvFailed('open', bucket, `history must be an integer in 1..${MAX_KV_HISTORY}`);
  }
  return history;
}
