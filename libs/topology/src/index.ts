// Public entry point of libs/topology: the topology service (health checks, replication lag,
// Redis Cluster slot maps, snapshots on the bus) and the pieces it is built from.
export { topologyService } from './service';
export { TopologyErrors } from './errors';
export { PositionTimeline } from './health/position-timeline';
export { BackendHealth, judgeLag, type LagVerdict, type Thresholds, type HealthState } from './health/backend-health';
export { BgdOverlay, type Placement } from './snapshot/bgd-overlay';
export { parseClusterShards, parseClusterSlots, type ClusterLayout, type ClusterShard, type ClusterNode } from './cluster/slot-map';
export type { CheckResult, ReplicaObservation, ObservedRole } from './checks/types';
