// Public entry of @dbproxy/testing: real servers on free ports for integration tests, and test helpers.
export { freePort } from './ports';
export { tmpDir, type TempDir } from './temp-dir';
export { waitFor, withTimeout, type WaitOptions } from './wait';
export type { ServerEndpoint, ServerProcess } from './server-process';
export type { ReplicatedServers } from './group';
export { startMariaDb, MARIADB_REPLICATION_USER, type MariaDbOptions, type MariaDbServer } from './mariadb';
export { startPostgres, type PostgresOptions, type PostgresServer } from './postgres';
export { startRedis, type RedisOptions, type RedisServer, type RedisTlsListener } from './redis';
export { startRedisCluster, CLUSTER_SLOTS, type RedisCluster, type RedisClusterNode, type RedisClusterOptions } from './redis-cluster';
export { startNats, type NatsOptions, type NatsServer } from './nats';
export { makeServerPki, makeTestPki, type ServerPki, type TestPki } from './pki';
export { RdsBgdSimulation, setReadOnly, promoteReplica, SOURCE_ROLE, TARGET_ROLE, type RdsEndpoint, type TopologyRowSpec } from './rds-bgd-simulator';
