// Public entry point of libs/topology-client: the edge-side view of the topology service's
// snapshots — usable backends per shard and role, DNS pins, slot owners and readiness.
export { TopologyClient, type TopologyClientOptions, type TopologyReadiness, type ReadinessSink, type ReadinessStatus, type RefreshReason, type TopologyListener, type HealthListener } from './topology-client';
export { TopologyView, pinnedAddress, testHostAddress, CLUSTER_SLOT_COUNT, type BackendState } from './topology-view';
export { retirementOf, type Retirement } from './backend-retirement';
