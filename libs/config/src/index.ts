// Public entry point of libs/config: TOML loading, `${ENV}` expansion, schema and defaults,
// cross-field validation with key paths, secrets redaction and immutable snapshots.
export { configSchema } from './schema/root';
export type {
  DbproxyConfig,
  MysqlConfig,
  PostgresConfig,
  RedisConfig,
  UserConfig,
  HealthConfig,
  TelemetryConfig,
  ConfigApiConfig,
  BgdDeploymentConfig,
  BusConfig,
} from './schema/root';
export type { MysqlBackendConfig, PostgresBackendConfig, RedisBackendConfig } from './schema/backends';
export type { HandshakeRouteConfig } from './schema/routes';
export { shardsOfMap, type ShardMapConfig } from './schema/common';
export { formatIssue, formatPath, type ConfigIssue } from './issues';
export { expandEnvironment, isPlaceholder, type Environment } from './env';
export { parseToml, validateDocument, readRawDocument, loadConfigFile, processEnvironment, type RawDocument, type ValidationResult } from './load';
export { configuredListeners, type ListenerAddress } from './listeners';
export { busAuthMethod, openBusExposures, natsUrlHosts, isLoopbackHost, type BusAuthMethod } from './bus-rules';
export { createSnapshot, type ConfigSnapshot, type DeepReadonly } from './snapshot';
export { redactSecrets, restoreRedacted, isSecretKey, containsSecret, literalSecretPaths, REDACTED } from './secrets';
export { summarizeConfig, describeChange, changedKeys } from './summary';
export { ConfigInvalidError, ConfigReadFailed } from './errors';
