// Gives the test PostgreSQL servers a password-protected pool role (SCRAM-SHA-256 in pg_hba.conf),
// so transaction mode's pooled connections authenticate with real backend credentials.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import type { PostgresServer, ReplicatedServers } from '@dbproxy/testing';

export const POOL_USER = 'dbproxy_pool';
export const POOL_PASSWORD = 'pool-secret-7c1e';

export async function requirePoolPassword(pg: ReplicatedServers<PostgresServer>, lines: readonly string[] = []): Promise<void> {
  const admin = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query(`SET password_encryption = 'scram-sha-256'`);
  await admin.query(`CREATE ROLE ${POOL_USER} LOGIN SUPERUSER PASSWORD '${POOL_PASSWORD}'`);
  await admin.end();
  for (const server of [pg.primary, ...pg.replicas]) {
    const hba = join(server.dataDir, 'pg_hba.conf');
    writeFileSync(hba, [...lines, `host all ${POOL_USER} 127.0.0.1/32 scram-sha-256`, readFileSync(hba, 'utf8')].join('\n'));
    const c = new Client({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' });
    await c.connect();
    await c.query('SELECT pg_reload_conf()');
    await c.end();
  }
  await pg.waitForReplicaCatchUp();
}
