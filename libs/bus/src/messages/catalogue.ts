// The subject catalogue (DESIGN §3): every subject and KV record on the bus with its schema
// and version. Bump a version when a change would break an older reader.
import { registerSigningServices } from '../identity/binding';
import type { SignedKind } from '../identity/bus-identities';
import * as S from './schemas';
import { defineMessage, defineRecord, defineRequest } from './spec';

/**
 * Messages that change placement or data, and the one service that may send each: receivers
 * refuse them unless signed by that service's key (libs/bus README, "Sender identity").
 */
export const SignedKinds = {
  bgdAction: { service: 'bgd-monitor', kind: 'bgd_action' },
  xaExecute: { service: 'mysql-edge', kind: 'xa_execute' },
  xaExecuteReply: { service: 'xa-coordinator', kind: 'xa_execute_reply' },
  configEpoch: { service: 'config-api', kind: 'config_epoch' },
} as const satisfies Record<string, SignedKind>;

/** Services that need a signing key, each once. */
export const SIGNING_SERVICES: readonly string[] = [...new Set(Object.values(SignedKinds).map((k) => k.service))];
registerSigningServices(SIGNING_SERVICES);

export const Subjects = {
  /** topology → edges, config-api. */
  health: defineMessage('health', 'dbproxy.health.{protocol}.{backend}', 1, S.HealthReport),
  /** topology → edges (a copy is kept in KV `dbproxy-topology` for late joiners). */
  topology: defineMessage('topology', 'dbproxy.topology.{protocol}', 1, S.TopologySnapshot),
  /** edges → topology (request/reply): the reply is the current snapshot. */
  topologyRefresh: defineRequest(
    'topologyRefresh',
    'dbproxy.topology.{protocol}.refresh',
    { version: 1, schema: S.TopologyRefreshRequest },
    { version: 1, schema: S.TopologySnapshot },
  ),
  /** bgd-monitor → topology, edges. */
  bgdState: defineMessage('bgdState', 'dbproxy.bgd.{deployment}.state', 1, S.BgdState),
  /** bgd-monitor → topology, edges. */
  bgdActions: defineMessage('bgdActions', 'dbproxy.bgd.actions', 1, S.BgdAction, SignedKinds.bgdAction),
  /** mysql-edge → xa-coordinator (request/reply). */
  xaExecute: defineRequest(
    'xaExecute',
    'dbproxy.xa.execute',
    { version: 1, schema: S.XaExecuteRequest, signed: SignedKinds.xaExecute },
    { version: 1, schema: S.XaExecuteReply, signed: SignedKinds.xaExecuteReply },
  ),
  /** edges → config-api. */
  edgeHeartbeat: defineMessage('edgeHeartbeat', 'dbproxy.edges.heartbeat', 1, S.EdgeHeartbeat),
  /** config-api → one edge instance (request/reply): sessions, pools, kill, pause, resume. */
  edgeAdmin: defineRequest('edgeAdmin', 'dbproxy.edges.{instance}.{protocol}.admin', { version: 1, schema: S.EdgeAdminRequest }, { version: 1, schema: S.EdgeAdminReply }),
  /** edges → edges. */
  cacheInvalidate: defineMessage('cacheInvalidate', 'dbproxy.cache.invalidate', 1, S.CacheInvalidation),
} as const;

export const KvRecords = {
  /** config-api → everyone; the revision of `current` is the configuration epoch. */
  config: defineRecord('config', 'dbproxy-config', 'current', 1, S.ConfigRecord, 1, SignedKinds.configEpoch),
  /** topology → edges: the last snapshot per protocol, for edges that start after it was published. */
  topology: defineRecord('topology', 'dbproxy-topology', '{protocol}', 1, S.TopologySnapshot),
} as const;
