// Zod schemas of every payload on the bus (DESIGN §3). Each is the payload without the `v`
// envelope field; the catalogue pairs a schema with its subject and version.
import { z } from 'zod';

export const Protocol = z.enum(['mysql', 'postgres', 'redis']);
export type Protocol = z.infer<typeof Protocol>;

const name = z.string().min(1).max(256);
const timestamp = z.string().datetime({ offset: true });
/** `host:port` (IPv6 hosts in brackets). */
const address = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):\d{1,5}$/, 'expected host:port');
const count = z.number().int().nonnegative();

export const BackendRole = z.enum(['primary', 'replica']);

/**
 * A backend's configured status: `offline_soft` takes no new connections or sessions (existing
 * ones finish), `offline_hard` has its connections closed now. Neither is eligible for blue/green
 * mapping or drains (spec 001).
 */
export const BackendStatus = z.enum(['online', 'offline_soft', 'offline_hard']);

/** KV `dbproxy-config` / `current`: the configuration in force; the KV revision is its epoch. */
export const ConfigRecord = z.object({
  /** The validated configuration document (libs/config's shape, secrets unexpanded). */
  config: z.record(z.string(), z.unknown()),
  /** Hex digest of the canonical configuration, to spot identical re-applies. */
  hash: z.string().min(1),
  author: name,
  comment: z.string().max(1024).optional(),
  appliedAt: timestamp,
  /** Set when this revision restores an older one. */
  rollbackOf: count.optional(),
});

/** `dbproxy.health.<protocol>.<backend>`: one health check result. */
export const HealthReport = z.object({
  protocol: Protocol,
  backend: name,
  up: z.boolean(),
  latencyMs: z.number().nonnegative().nullable(),
  /** Replication lag; null on primaries or when unknown. */
  lagSeconds: z.number().nonnegative().nullable(),
  /** GTID set (MySQL), LSN (PostgreSQL) or replication offset (Redis); null when unknown. */
  position: z.string().max(65_536).nullable(),
  roleObserved: z.enum(['primary', 'replica', 'unknown']),
  checkedAt: timestamp,
  error: z.string().max(1024).optional(),
});

export const TopologyBackend = z.object({
  name,
  address,
  role: BackendRole,
  weight: z.number().nonnegative(),
  healthy: z.boolean(),
  lagging: z.boolean(),
  shunned: z.boolean(),
  draining: z.boolean(),
  /** The configured status; absent in snapshots of older topology services: `online`. */
  status: BackendStatus.optional(),
  /** IP the backend's hostname is pinned to during a blue/green switchover, else null. */
  dnsPin: z.string().min(1).nullable(),
  /** A shard primary lent to the readers (blue/green: every blue reader shunned). */
  servesReads: z.boolean().optional(),
});

export const TopologyShard = z.object({
  shard: name,
  /** Redis Cluster hash-slot ranges [first, last] served by this shard. */
  slots: z.array(z.tuple([z.number().int().min(0).max(16_383), z.number().int().min(0).max(16_383)])).optional(),
  backends: z.array(TopologyBackend),
});

/** `dbproxy.topology.<protocol>` and KV `dbproxy-topology` / `<protocol>`: the full snapshot. */
export const TopologySnapshot = z.object({
  protocol: Protocol,
  /** Increases with every published snapshot of this protocol; edges ignore older ones. */
  generation: count,
  /** Configuration epoch the snapshot was built from. */
  epoch: count,
  publishedAt: timestamp,
  shards: z.array(TopologyShard),
});

/** `dbproxy.topology.<protocol>.refresh`: an edge asks for a fresh snapshot (after a Redis MOVED). */
export const TopologyRefreshRequest = z.object({
  protocol: Protocol,
  reason: z.enum(['moved', 'ask', 'connection-error', 'unknown-backend', 'manual']),
  requestedBy: name,
  /** Generation the edge has; the reply is at least this new. */
  knownGeneration: count,
  slot: z.number().int().min(0).max(16_383).optional(),
  address: address.optional(),
});

export const BgdPhase = z.enum([
  'NONE',
  'AVAILABLE',
  'WRITER_SWITCHOVER_INITIATED',
  'WRITER_SWITCHOVER_IN_PROGRESS',
  'WRITER_SWITCHOVER_POST_PROCESSING',
  'WRITER_SWITCHOVER_COMPLETED',
  'READER_SWITCHOVER_IN_PROGRESS',
  'SWITCHOVER_COMPLETED',
]);

/** `dbproxy.bgd.<deployment>.state`: a blue/green deployment changed phase. */
export const BgdState = z.object({
  deployment: name,
  phase: BgdPhase,
  previousPhase: BgdPhase,
  /** Raw status read from mysql.rds_topology, null when the table is empty or absent. */
  observedStatus: z.string().max(128).nullable(),
  writer: z.object({ blue: name, green: name.nullable(), greenAddress: z.string().min(1).nullable() }).nullable(),
  reason: z.string().max(1024),
  changedAt: timestamp,
});

const actionBase = { deployment: name, actionId: name, issuedAt: timestamp, reason: z.string().max(1024) };

/** `dbproxy.bgd.actions`: what bgd-monitor asks topology and the edges to do. */
export const BgdAction = z.discriminatedUnion('action', [
  z.object({ ...actionBase, action: z.literal('pin-dns'), hostname: name, ip: z.string().min(1) }),
  z.object({ ...actionBase, action: z.literal('unpin-dns'), hostname: name }),
  z.object({ ...actionBase, action: z.literal('shun'), backend: name }),
  z.object({ ...actionBase, action: z.literal('unshun'), backend: name }),
  z.object({ ...actionBase, action: z.literal('move-writer'), shard: name, from: name, to: name }),
  z.object({ ...actionBase, action: z.literal('drain-backend'), backend: name, deadlineMs: count }),
  /** Lend (serves = true) or return a shard's writer to/from read selection. */
  z.object({ ...actionBase, action: z.literal('writer-serves-reads'), shard: name, backend: name, serves: z.boolean() }),
]);

/** `dbproxy.xa.execute` request: run one statement as a two-phase transaction across shards. */
export const XaExecuteRequest = z.object({
  requestedBy: name,
  /** Statement text to run on every participant unless a participant overrides it. */
  statement: z.string().min(1),
  participants: z
    .array(z.object({ shard: name, backend: name, statement: z.string().min(1).optional() }))
    .min(1),
  /** Time budget in ms from receipt; past it the coordinator decides rollback. */
  deadlineMs: z.number().int().positive(),
});

const XaOutcome = z.object({
  shard: name,
  backend: name,
  outcome: z.enum(['committed', 'rolled-back', 'failed', 'unknown']),
  affectedRows: count.optional(),
  error: z.object({ code: z.string(), message: z.string(), errno: z.number().int().optional(), sqlState: z.string().length(5).optional() }).optional(),
});

/** `dbproxy.xa.execute` reply: the decision and what happened on each participant. */
export const XaExecuteReply = z.object({
  xid: name,
  decision: z.enum(['commit', 'rollback']),
  outcomes: z.array(XaOutcome),
});

/** `dbproxy.edges.heartbeat`: an edge instance is alive. */
export const EdgeHeartbeat = z.object({
  instanceId: name,
  protocol: Protocol,
  /** Config epoch the instance serves new sessions on. */
  epoch: count,
  sessions: count,
  version: z.string().min(1).max(64),
  adminAddress: address,
  startedAt: timestamp,
  sentAt: timestamp,
});

/** `dbproxy.cache.invalidate`: tables written by a commit, with their bumped generations. */
export const CacheInvalidation = z.object({
  instanceId: name,
  protocol: Protocol,
  /** `schema.table` → new generation; cached results of older generations are stale. */
  tables: z.record(z.string().min(1), count),
});

/** `dbproxy.edges.<instance>.<protocol>.admin` request: what an operator asks of one edge instance. */
export const EdgeAdminRequest = z.discriminatedUnion('action', [
  z.object({ action: z.literal('sessions'), deadlineMs: z.number().int().positive().max(60_000) }),
  z.object({ action: z.literal('pools'), deadlineMs: z.number().int().positive().max(60_000) }),
  z.object({ action: z.literal('kill'), deadlineMs: z.number().int().positive().max(60_000), session: z.string().min(1).max(128), reason: z.string().max(256) }),
  /** Held statements fail after holdSeconds (absent: proxy.pause_timeout_seconds). */
  z.object({ action: z.literal('pause'), deadlineMs: z.number().int().positive().max(60_000), holdSeconds: z.number().positive().max(86_400).optional() }),
  z.object({ action: z.literal('resume'), deadlineMs: z.number().int().positive().max(60_000) }),
]);

const EdgeSession = z.object({
  id: z.string().min(1).max(128),
  clientAddress: z.string().max(256),
  user: z.string().max(256),
  database: z.string().max(256),
  listener: z.string().max(256),
  state: z.string().min(1).max(64),
  /** A fingerprint, never literal values. */
  statement: z.string().max(4096).nullable(),
  backend: z.string().max(256).nullable(),
  pinnedReason: z.string().max(256).nullable(),
  epoch: count,
  startedAt: count,
  bytesIn: count,
  bytesOut: count,
  /** The handshake route ([[mysql.routes]] / [[postgres.routes]]) and the shard the session runs on. */
  route: z.string().max(256).nullable().optional(),
  shard: z.string().max(256).nullable().optional(),
});

const waitMs = z.number().nonnegative();
const EdgePool = z.object({
  backend: name,
  inUse: count,
  idle: count,
  waiters: count,
  checkouts: count,
  timeouts: count,
  resets: count,
  waitMs: z.object({ p50: waitMs, p95: waitMs, p99: waitMs }),
});

/** `dbproxy.edges.<instance>.<protocol>.admin` reply: the instance's state and what the action asked for. */
export const EdgeAdminReply = z.object({
  protocol: Protocol,
  paused: z.boolean(),
  statementsTotal: count,
  sessions: z.array(EdgeSession).max(20_000).optional(),
  pools: z.array(EdgePool).max(10_000).optional(),
  /** kill: whether a process of the instance had the session. */
  killed: z.boolean().optional(),
});

export type BackendRole = z.infer<typeof BackendRole>;
export type BackendStatus = z.infer<typeof BackendStatus>;
export type ConfigRecord = z.infer<typeof ConfigRecord>;
export type HealthReport = z.infer<typeof HealthReport>;
export type TopologyBackend = z.infer<typeof TopologyBackend>;
export type TopologyShard = z.infer<typeof TopologyShard>;
export type TopologySnapshot = z.infer<typeof TopologySnapshot>;
export type TopologyRefreshRequest = z.infer<typeof TopologyRefreshRequest>;
export type BgdPhase = z.infer<typeof BgdPhase>;
export type BgdState = z.infer<typeof BgdState>;
export type BgdAction = z.infer<typeof BgdAction>;
export type XaExecuteRequest = z.infer<typeof XaExecuteRequest>;
export type XaExecuteReply = z.infer<typeof XaExecuteReply>;
export type EdgeHeartbeat = z.infer<typeof EdgeHeartbeat>;
export type CacheInvalidation = z.infer<typeof CacheInvalidation>;
export type EdgeAdminRequest = z.infer<typeof EdgeAdminRequest>;
export type EdgeAdminReply = z.infer<typeof EdgeAdminReply>;
