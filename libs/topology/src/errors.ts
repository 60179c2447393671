// Error codes of libs/topology (documented in the library README).
import { createError } from '@dbproxy/util';

export const TopologyErrors = {
  checkTimeout: createError<[string, number]>('DBP_ERR_TOPOLOGY_CHECK_TIMEOUT', 'health check of %s timed out after %d ms'),
  unexpectedReply: createError<[string, string, string]>('DBP_ERR_TOPOLOGY_UNEXPECTED_REPLY', 'unexpected reply to %s from %s: %s'),
  clusterUnreachable: createError<[string]>('DBP_ERR_TOPOLOGY_CLUSTER_UNREACHABLE', 'no Redis Cluster node answered CLUSTER SHARDS or CLUSTER SLOTS (%s)'),
  monitorClosed: createError<[string]>('DBP_ERR_TOPOLOGY_MONITOR_CLOSED', 'monitor connection to %s was closed while the check ran'),
} as const;
