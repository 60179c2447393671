// Public entry point of pool: bounded, protocol-agnostic backend connection pools and the
// per-edge set of them.
export { BackendPool, type DrainOptions } from './backend-pool';
export { PoolSet, type BackendPoolConfig, type PoolSetOptions } from './pool-set';
export { PoolErrors } from './errors';
export { POOL_DEFAULTS, type ResolvedSizing } from './pool-options';
export { MAX_DESTROY_REASONS, type PoolEvent, type PoolEventName } from './pool-counters';
export { isLegalTransition, type ConnectionState, type PoolConnectionTransition } from './pooled-connection';
export { JoinableLendings, type JoinableLending } from './joinable-lendings';
export { AUTO_PIPELINE_MAX_DEPTH, pipelineDepth, pipelineDepthCap, pipelines, type PipelineDepthSetting, type PipelineLoad } from './pipeline-depth';
export { SharedCapacity, type CapacityMember } from './shared-capacity';
export type { AcquireOptions, ConnectionFactory, Lease, PoolOptions, PoolSizing, PoolStats, ReleaseOptions } from './types';
export { WaitSample, WAIT_SAMPLE_SIZE, type WaitQuantiles } from './wait-sample';
