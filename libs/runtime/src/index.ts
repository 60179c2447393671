// Public entry point of libs/runtime: service lifecycle, readiness, admin HTTP, configuration
// following and edge heartbeats, and socket I/O without the stream layer for the protocol edges.
export { startRuntime, InvalidConfigFile, type Runtime, type RuntimeOptions } from './runtime';
export { DRAIN_LATENESS_MS, CLOSE_GRACE_MS, RUNTIME_CLOSE_MS, type ShutdownReport } from './shutdown';
export { runMain, type MainOptions } from './main';
export { Readiness, type ComponentStatus, type ComponentState, type ReadinessReport } from './readiness';
export { ConfigFollower, documentHash, type ConfigSource, type ConfigListener } from './config-follower';
export { splitListen } from './admin-server';
export { snakeCaseKeys, snakeCaseKey } from './admin-json';
export type { WorkerLauncher } from './workers/worker-group';
export { usableCpus, cgroupCpuQuota, CGROUP_CPU_PATHS, type CpuQuotaPaths } from './workers/cpu-quota';
export { ServiceListeners, type ListenerSpec, type BoundListener, type RejectReason } from './listeners';
export type { ServiceDefinition, ServiceContext, RunningService, ServiceName, AdminKey, EdgeStatus, ServiceReadiness } from './service';
export {
  adoptable,
  adoptSocket,
  adoptSocketRaw,
  ByteReader,
  onreadBytes,
  onreadRanges,
  readSocket,
  readSocketRanges,
  onreadRaw,
  type BytesListener,
  type RangeListener,
  type RawListener,
} from './sockets/scratch-reads';
export { descriptorOf, DirectSocket } from './sockets/direct-write';
export { StateMachine, IllegalTransition } from './state-machine';
export { loadFrontendTls, type FrontendTls, type FrontendTlsMode } from './sockets/frontend-tls';
export { backendTlsOptions, type BackendTlsOptions, type BackendTlsSettings } from './sockets/backend-tls';
export { edgeAdmin, type EdgeAdmin } from './edge-admin/edge-admin';
export { PauseGate, PauseHoldTimeout } from './edge-admin/pause-gate';
export { LiveSessions, type AdminSession } from './edge-admin/live-sessions';
export { SessionIds, sessionJson, poolJson, mergePools, poolSnapshotOf, type SessionSnapshot, type PoolSnapshot, type SessionSource, type WaitQuantiles } from './edge-admin/session-report';
export { encodeProxyV2, encodeProxyV2Local, type ProxiedAddresses, type ProxyEndpoint } from './proxy-protocol/encode';
export { ProxyHeaderDecoder, type ProxyHeader, type ProxyDecodeStep } from './proxy-protocol/decode';
export { carryClientAddress, clientAddressesOf } from './proxy-protocol/client-address';
