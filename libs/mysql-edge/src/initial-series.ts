// The mysql-edge series known at start, made at zero: per listener, login outcome, pin cause,
// refusal reason and configured backend, so that rates and alerts see them before the first event.
// (Pool and per-query series of configured backends are zero-filled at scrape time, metrics.ts.)
import { zeroSeries } from '@dbproxy/observability';
import type { EdgeMetrics } from './metrics';

const SHARD_REFUSALS = ['no_key', 'several_shards', 'key_assigned', 'bad_key', 'join', 'merge', 'transaction', 'user_shards', 'hint', 'unsupported'];

export interface KnownBackend {
  readonly name: string;
  readonly shard: string;
}

export function zeroMysqlEdgeSeries(m: EdgeMetrics, backends: readonly KnownBackend[], routes: readonly { route: string; outcome: string }[] = []): void {
  zeroSeries(m.sessions, { listener: ['read_write', 'read_only'] });
  zeroSeries(m.logins, { result: ['ok', 'denied', 'failed'], plugin: ['mysql_native_password', 'caching_sha2_password'], tls: ['true', 'false'] });
  zeroSeries(m.pins, { cause: ['transaction', 'autocommit', 'session_state', 'cursor', 'implicit_transaction'] });
  zeroSeries(m.kills, { scope: ['query', 'connection'], outcome: ['ok', 'denied'] });
  zeroSeries(m.shardRefusals, { reason: SHARD_REFUSALS });
  zeroSeries(m.allShardReads, {});
  for (const r of routes) zeroSeries(m.routeSessions, { route: [r.route], outcome: [r.outcome] });
  for (const b of backends) zeroSeries(m.backendFailures, { backend: [b.name], reason: ['lost', 'protocol', 'result_too_large'], shard: [b.shard] });
}
