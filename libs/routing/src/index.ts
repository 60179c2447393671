// Public entry point of routing: shard maps, Redis slots, replica selection, read-after-write.
export * from './errors';
export { fnv1a64, fnv1a64Hex, fnv1a64Mod } from './fnv';
export { isIntegerText, normalizeShardKey, parseIntegerText, type NormalizedKey, type ShardKey } from './shard-key';
export { createShardMap, shardMapFromSettings, shardMapSpecFromSettings, type ShardMap, type ShardMapSettings, type ShardMapSpec, type ShardRule } from './shard-map';
export { crc16, redisSlot, REDIS_SLOT_COUNT } from './redis-slot';
export {
  DEFAULT_PRESSURE_MARGIN,
  poolPressure,
  ReplicaSelector,
  type ReplicaCandidate,
  type ReplicaSelectorOptions,
} from './replica-selector';
export { ReadAfterWriteWindow } from './read-after-write';
export { DEFAULT_ROUTE, HandshakeRoutes, NO_ROUTE, type HandshakeRouteSpec, type RouteChoice, type RouteOutcome } from './handshake-routes';
