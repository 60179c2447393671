// The whole configuration document: every top-level section of DESIGN.md §2.
import { z } from 'zod';
import { mysqlBackend, postgresBackend, redisBackend } from './backends';
import { bgdSection } from './bgd';
import { configApiSection, healthSection, topologySection } from './control';
import { mysqlSection } from './mysql';
import { postgresSection } from './postgres';
import { busSection, proxySection, telemetrySection } from './proxy';
import { redisSection } from './redis';
import { usersSection } from './users';

export const configSchema = z
  .object({
    proxy: proxySection.default({}),
    bus: busSection.default({}),
    telemetry: telemetrySection.default({}),
    users: usersSection,
    health: healthSection.default({}),
    topology: topologySection.default({}),
    mysql: mysqlSection.default({}),
    mysql_backends: z.array(mysqlBackend).default([]),
    postgres: postgresSection.default({}),
    postgres_backends: z.array(postgresBackend).default([]),
    redis: redisSection.default({}),
    redis_backends: z.array(redisBackend).default([]),
    bgd_deployments: bgdSection,
    config_api: configApiSection.default({}),
  })
  .strict();

/** The validated configuration with every default filled in. */
export type DbproxyConfig = z.infer<typeof configSchema>;
export type MysqlConfig = DbproxyConfig['mysql'];
export type PostgresConfig = DbproxyConfig['postgres'];
export type RedisConfig = DbproxyConfig['redis'];
export type UserConfig = DbproxyConfig['users'][number];
export type HealthConfig = DbproxyConfig['health'];
export type TelemetryConfig = DbproxyConfig['telemetry'];
export type BusConfig = DbproxyConfig['bus'];
export type ConfigApiConfig = DbproxyConfig['config_api'];
export type BgdDeploymentConfig = DbproxyConfig['bgd_deployments'][number];
