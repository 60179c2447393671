// A statement still running at proxy.shutdown_timeout_seconds, in both modes: the runtime's
// shutdown (what SIGTERM runs) ends the session with FATAL 57P01, as a PostgreSQL server shutting
// down does, which node-postgres reports, instead of a dropped socket.
import { Client, type DatabaseError } from 'pg';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge } from './harness';

jest.setTimeout(60_000);

let pg: ReplicatedServers<PostgresServer>;

beforeAll(async () => {
  pg = await startPostgres({ replicas: 0 });
  await requirePoolPassword(pg);
});

afterAll(async () => {
  await pg?.destroy();
});

it.each(['transaction', 'transparent'] as const)('%s mode: pg_sleep(30) at the shutdown deadline ends with FATAL 57P01', async (mode) => {
  const extra = mode === 'transaction' ? `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"` : '';
  const edge = await startEdge(
    [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra }],
    `routing_mode = "${mode}"`,
    mode === 'transaction' ? '[[users]]\nname = "app"\npassword = "app-secret"' : '',
    { proxy: 'shutdown_timeout_seconds = 1' },
  );
  const user = mode === 'transaction' ? { user: 'app', password: 'app-secret' } : { user: 'postgres' };
  const c = new Client({ host: '127.0.0.1', port: edge.rwPort, database: 'postgres', ...user });
  c.on('error', () => undefined);
  try {
    await c.connect();
    const sleeping = c.query('SELECT pg_sleep(30)').then(
      () => undefined,
      (err: unknown) => err as DatabaseError,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await edge.runtime.shutdown('SIGTERM');
    expect(await sleeping).toMatchObject({ code: '57P01', severity: 'FATAL', message: 'terminating connection due to administrator command: the proxy is shutting down' });
  } finally {
    await c.end().catch(() => undefined);
    await edge.stop();
  }
});
