// Public entry point of pg-edge: the PostgreSQL edge service (transparent and transaction modes).
export { pgEdgeService } from './service';
export { PgEdgeErrors, pgEdgeErrorCodes, sqlStateOf, toErrorResponse } from './errors';
export { StartupShardKey, type ShardResolution } from './startup-shard-key';
export { CancelKeyRegistry, type ProxyKey } from './cancel-keys';
export { decideUnit, type UnitDecision } from './transaction/unit-route';
export { carriedType } from './transaction/response-relay';
