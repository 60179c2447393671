// What every session of one edge process shares: the epoch in force, pools, catalogs, TLS and
// auth material, telemetry, and the coarse clock of the deadline sweep.
import type { Tracer } from '@opentelemetry/api';
import type { ResultCache } from './cache/result-cache';
import type { Logger } from '@dbproxy/observability';
import type { Sha2DigestCache } from '@dbproxy/protocol-mysql';
import type { BackendConnectionState } from './backend/backend-connection';
import type { BackendPools } from './backend/backend-pools';
import type { CollationCatalog } from './backend/collations';
import type { ParkedLeases } from './backend/parked-leases';
import type { Pipelines } from './backend/pipelines';
import type { StatementCatalog } from './backend/statement-catalog';
import type { CausalReads } from './causal/causal-reads';
import type { EdgeEpoch } from './epoch';
import type { FrontendTls, PauseGate, SessionIds } from '@dbproxy/runtime';
import type { RsaKeys } from './frontend/client-login';
import type { KillSwitch } from './kill/kill-switch';
import type { FanoutCoordinator } from './fanout/fanout-coordinator';
import type { EdgeMetrics, QueryCounters } from './metrics';
import type { StateTable } from './state-machine';

export type SessionState = 'login' | 'ready' | 'routing' | 'exchanging' | 'reauth' | 'closed';

export const SESSION_STATES: readonly SessionState[] = ['login', 'ready', 'routing', 'exchanging', 'reauth', 'closed'];
export const SESSION_MOVES: Readonly<Record<SessionState, readonly SessionState[]>> = {
  login: ['ready', 'closed'],
  ready: ['routing', 'exchanging', 'reauth', 'closed'],
  routing: ['exchanging', 'ready', 'closed'],
  exchanging: ['ready', 'routing', 'closed'],
  reauth: ['ready', 'closed'],
  closed: [],
};

export interface AdvertisedServer {
  readonly serverVersion: string;
  readonly mariaDbCapabilities: number;
}

/** A clock read once per sweep (about a second): deadlines are coarse, reading it is free. */
export interface CoarseClock {
  readonly now: number;
}

export interface EdgeContext {
  /** The epoch new sessions (and unpinned sessions at their next statement) take. */
  epoch(): EdgeEpoch;
  readonly pools: BackendPools;
  /** Clean connections sessions keep between statements. */
  readonly parked: ParkedLeases;
  /** Lendings whose connection runs pipelined reads of several sessions. */
  readonly pipelines: Pipelines;
  readonly catalog: StatementCatalog;
  readonly collations: CollationCatalog;
  readonly tls: FrontendTls;
  readonly rsa: RsaKeys | undefined;
  readonly sha2Cache: Sha2DigestCache;
  readonly metrics: EdgeMetrics;
  readonly queries: QueryCounters;
  readonly clock: CoarseClock;
  readonly sessionStates: StateTable<SessionState>;
  readonly backendStates: StateTable<BackendConnectionState>;
  /** Set when [telemetry] exports spans; null keeps the query path free of span work. */
  readonly tracer: Tracer | null;
  readonly logger: Logger;
  /** True while the service drains: sessions close at their next idle moment. */
  readonly draining: boolean;
  /** Fanout copies of this process: lanes, paths, metrics (src/fanout). */
  readonly fanout: FanoutCoordinator;
  /** The result cache on Redis ([mysql.cache], src/cache). */
  readonly cache: ResultCache;
  /** Edge connection ids and the KILLs naming them. */
  readonly kills: KillSwitch;
  /** Admin session ids (GET /sessions, DELETE /v1/sessions/{id}). */
  readonly sessionIds: SessionIds;
  /** Causal reads: replicas' applied positions learned by this process, outcome metrics (src/causal). */
  readonly causal: CausalReads;
  /** Holds statements that start new work while an operator pauses the edge. */
  readonly pause: PauseGate;
  /** Commands dispatched since start (statements_total); sessions add to it. */
  commandsRun: number;
  /** What the greeting advertises now: server version and MariaDB extended capabilities. */
  advertised(): AdvertisedServer;
  /** A session ended (the sweep stops looking at it). */
  sessionClosed(session: object): void;
}
