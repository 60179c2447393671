// pgbench and psql through transaction mode: the TPC-B-like script with 50 clients on the extended
// protocol over a pool of 10 reports no failed transactions; named statements (-M prepared) too.
import { processEnvironment } from '@dbproxy/config';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';
import { run } from './processes';

jest.setTimeout(120_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
const env = () => ({ ...processEnvironment(), PGPASSWORD: 'bench-secret', PGCLIENTENCODING: 'UTF8', PGCONNECT_TIMEOUT: '10' });

function figures(output: string): { processed: number; failed: number | undefined; tps: number } {
  const processed = Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? NaN);
  const failedMatch = /number of failed transactions: (\d+)/.exec(output);
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1] ?? NaN);
  return { processed, failed: failedMatch ? Number(failedMatch[1]) : undefined, tps };
}

beforeAll(async () => {
  pg = await startPostgres({ replicas: 1 });
  await requirePoolPassword(pg);
  const init = await run('pgbench', ['-i', '-s', '1', '-q', '-h', pg.primary.host, '-p', String(pg.primary.port), '-U', 'postgres', 'postgres'], { env: env() });
  expect(init.status).toBe(0);
  await pg.waitForReplicaCatchUp();
  const extra = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"`;
  edge = await startEdge(
    [
      { name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra },
      { name: 'replica', host: pg.replicas[0].host, port: pg.replicas[0].port, role: 'replica', extra },
    ],
    'routing_mode = "transaction"\npool_max_per_backend = 10',
    '[[users]]\nname = "app"\npassword = "bench-secret"',
  );
});

afterAll(async () => {
  await edge?.stop();
  await pg?.destroy();
});

const proxied = () => ['-h', '127.0.0.1', '-p', String(edge.rwPort), '-U', 'app', '-n'];

it('runs pgbench TPC-B-like, -c 50 -M extended, over a pool of 10 with no failed transactions', async () => {
  const result = await run('pgbench', [...proxied(), '-c', '50', '-j', '2', '-M', 'extended', '-T', '10', 'postgres'], { env: env(), timeoutMs: 60_000 });
  const out = figures(result.stdout);
  expect(result.stderr).not.toMatch(/error|FATAL/i);
  expect(result.status).toBe(0);
  expect(out.failed ?? 0).toBe(0);
  expect(out.processed).toBeGreaterThan(100);
  const report = await edge.backends();
  const pool = report.backends.find((b) => b['name'] === 'primary')?.['transaction_pool'] as Record<string, number>;
  expect(pool.total).toBeLessThanOrEqual(10);
});

it('runs pgbench -S with named prepared statements (-M prepared) re-prepared across pooled connections', async () => {
  const result = await run('pgbench', [...proxied(), '-S', '-c', '20', '-j', '2', '-M', 'prepared', '-T', '3', 'postgres'], { env: env(), timeoutMs: 60_000 });
  expect(result.status).toBe(0);
  expect(figures(result.stdout).failed ?? 0).toBe(0);
  expect(figures(result.stdout).processed).toBeGreaterThan(100);
});

it('serves psql, whose reads reach the replica', async () => {
  const result = await run('psql', [...proxied().filter((a) => a !== '-n'), '-X', '-At', '-c', "SELECT count(*), current_setting('transaction_read_only') FROM pgbench_branches", 'postgres'], { env: env() });
  expect(result.stderr).toBe('');
  expect(result.stdout.trim()).toBe('1|on');
});
