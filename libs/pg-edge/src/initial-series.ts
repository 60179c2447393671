// The pg-edge series known at start, made at zero: per listener, routing mode, outcome and shard,
// so that rates and alerts see them before the first event.
import { zeroSeries } from '@dbproxy/observability';
import type { PgEdgeMetrics } from './metrics';

const LISTENERS = ['read_write', 'read_only'];

export interface KnownAtStart {
  readonly mode: 'transparent' | 'transaction';
  /** Shards of [[postgres.sharding.rules]] (none without statement sharding). */
  readonly shards: readonly string[];
  /** [[postgres.routes]] series (route, outcome); none without routes. */
  readonly routes?: readonly { readonly route: string; readonly outcome: string }[];
}

export function zeroPgEdgeSeries(m: PgEdgeMetrics, known: KnownAtStart): void {
  zeroSeries(m.sessions, { mode: [known.mode], listener: LISTENERS });
  zeroSeries(m.transactionPins, { listener: LISTENERS });
  zeroSeries(m.sessionPins, { listener: LISTENERS });
  zeroSeries(m.readOnlyRejections, { listener: LISTENERS });
  zeroSeries(m.routingFailures, { reason: ['read_only', 'no_backend', 'acquire', 'backend_connect', 'multi_shard'] });
  zeroSeries(m.cancelRequests, { mode: [known.mode], outcome: ['forwarded', 'passthrough', 'broadcast'] });
  zeroSeries(m.startupRejections, { reason: ['auth', 'tls_required', 'shard', 'route', 'startup_parameters', 'no_backend', 'max_connections', 'draining'] });
  zeroSeries(m.fallbacks, { mode: [known.mode] });
  zeroSeries(m.sessionsPoisoned, { reason: known.mode === 'transaction' ? ['transaction', 'pinned', 'unit'] : [] });
  zeroSeries(m.shardUnits, { shard: known.shards });
  zeroSeries(m.pipelinedUnits, {});
  for (const r of known.routes ?? []) zeroSeries(m.routeSessions, { route: [r.route], outcome: [r.outcome] });
  if (known.mode === 'transaction') zeroSeries(m.routes, { route: ['primary', 'replica', 'held'], listener: LISTENERS });
}
