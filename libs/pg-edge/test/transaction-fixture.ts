// One PostgreSQL primary (with a replica) behind a pg-edge in transaction mode, pooled with the
// test pool account, and node-postgres clients of user "app": the setup several transaction-mode
// test files share. `postgresSettings` are the `[postgres]` lines the file is about.
import { Client } from 'pg';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';

export interface TransactionFixture {
  readonly pg: ReplicatedServers<PostgresServer>;
  readonly edge: EdgeHarness;
  /** A connected node-postgres client of user "app" on the read-write listener. */
  connect(): Promise<Client>;
  stop(): Promise<void>;
}

export async function startTransactionFixture(postgresSettings: string): Promise<TransactionFixture> {
  const pg = await startPostgres({ replicas: 1 });
  await requirePoolPassword(pg);
  const extra = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;
  const edge = await startEdge(
    [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra }],
    `routing_mode = "transaction"\n${postgresSettings}`,
    '[[users]]\nname = "app"\npassword = "app-secret"',
  ).catch(async (err: unknown) => {
    await pg.destroy();
    throw err;
  });
  return {
    pg,
    edge,
    async connect() {
      const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'app-secret', database: 'postgres' });
      await c.connect();
      return c;
    },
    async stop() {
      await edge.stop();
      await pg.destroy();
    },
  };
}
