// The redis-edge series known at start, made at zero: per listener, mode, configured node, merge
// policy and refusal reason, so that rates and alerts see them before the first event.
import { zeroSeries } from '@dbproxy/observability';
import { MERGE_NAMES } from './command/merge';
import type { RedisEdgeMetrics } from './metrics';

const LISTENERS = ['read_write', 'read_only'];
/** `dbproxy_redis_rejected_commands_total{reason}`: what the command-mode dispatcher refuses before routing. */
const REJECTIONS = [
  'read_only', 'unknown_read_only', 'unknown_subcommand', 'administrative', 'cluster', 'cross_slot', 'cross_shard_write', 'cross_shard_msetnx',
  'keys_unknown', 'unmapped_key', 'loading', 'subscribed_context', 'subscriptions_limit', 'transaction', 'unsupported', 'leases_exhausted', 'cross_protocol',
];

export interface KnownAtStart {
  readonly mode: 'command' | 'connection';
  readonly backends: readonly { readonly name: string; readonly shard: string }[];
}

export function zeroRedisEdgeSeries(m: RedisEdgeMetrics, known: KnownAtStart): void {
  zeroSeries(m.sessions, { mode: [known.mode], listener: LISTENERS });
  zeroSeries(m.backendErrors, { kind: ['connect'] });
  if (known.mode === 'connection') return zeroSeries(m.shardRefusals, { reason: ['missing', 'invalid', 'no_backend', 'protocol'] });
  for (const b of known.backends) zeroSeries(m.commands, { type: ['read', 'write', 'other'], shard: [b.shard], backend: [b.name] });
  zeroSeries(m.fanouts, { policy: MERGE_NAMES });
  zeroSeries(m.redirects, { kind: ['moved', 'ask'] });
  zeroSeries(m.retries, { reason: ['tryagain', 'clusterdown'] });
  zeroSeries(m.rejected, { reason: REJECTIONS, listener: LISTENERS });
  zeroSeries(m.leaseEvents, { event: ['leased', 'returned', 'closed', 'refused', 'abandoned'] });
  zeroSeries(m.backpressure, { reason: ['output', 'outstanding'] });
}
