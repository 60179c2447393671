// What every pg-edge session reads: the epoch's settings, backends, shard key, TLS, cancel keys and telemetry.
import type { Tracer } from '@opentelemetry/api';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { Logger } from '@dbproxy/observability';
import type { BackendDirectory } from './backend-directory';
import type { CancelKeyRegistry } from './cancel-keys';
import type { FrontendTls, PauseGate, SessionIds } from '@dbproxy/runtime';
import type { IdleSweep } from './idle-sweep';
import type { PgEdgeMetrics } from './metrics';
import type { StartupRoutes } from './startup-routes';

export type ListenerRole = 'read_write' | 'read_only';

/** One configuration epoch as sessions see it; a session keeps the one it started with. */
export interface EdgeEpoch {
  readonly epoch: number;
  readonly config: DeepReadonly<DbproxyConfig>;
  readonly directory: BackendDirectory;
  /** The startup's shard: [[postgres.routes]] by database/user, or the [postgres.sharding] parameter. */
  readonly shardKey: StartupRoutes;
}

export interface EdgeContext {
  /** The epoch in force for new sessions. */
  epoch(): EdgeEpoch;
  readonly tls: FrontendTls;
  readonly cancelKeys: CancelKeyRegistry;
  readonly metrics: PgEdgeMetrics;
  readonly logger: Logger;
  /** Spans per transaction-mode unit and per transparent session (no-op when tracing is off). */
  readonly tracer: Tracer;
  /** Transparent sessions open per backend, the load the read-only choice balances. */
  readonly transparentLoad: Map<string, number>;
  /** Admin session ids (GET /sessions, DELETE /v1/sessions/{id}). */
  readonly sessionIds: SessionIds;
  /** Holds units that start new work while an operator pauses the edge. */
  readonly pause: PauseGate;
  /** Units and transparent sessions started since start (statements_total; transparent sessions are not parsed). */
  readonly counts: { statements: number };
  /** Sessions waiting for their client, closed after proxy.client_read_timeout_seconds. */
  readonly idle: IdleSweep;
  /** Offers a CancelRequest whose key this process does not know to every other pg-edge process. */
  broadcastCancel(processId: number, secretKey: number): void;
}

/**
 * How long a client may take from connect to a finished startup (TLS and authentication
 * included): twice `postgres.connect_timeout_seconds`, at least 10 s (mysql-edge's rule).
 */
export function loginDeadlineMs(config: DeepReadonly<DbproxyConfig>): number {
  return Math.max(10_000, config.postgres.connect_timeout_seconds * 2000);
}
