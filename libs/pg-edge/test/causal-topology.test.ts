// Causal reads in transaction mode with replay positions from topology's health checks
// (pg_last_wal_replay_lsn() in every check's report), on a real PostgreSQL primary and two
// streaming replicas, one of which stopped receiving WAL (primary_conninfo pointed nowhere, replay
// not paused, so it stays in read selection): once topology has seen the other replica replay the
// session's commit, every read goes there at once and none waits on the stale one.
import { Subjects, subscribeMessages, type HealthReport, type Subscription } from '@dbproxy/bus';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { Client } from 'pg';
import { parseLsn } from '../src/transaction/causal-lsn';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
let primary: Client;
let slowAdmin: Client;
let reports: Subscription;
const latest = new Map<string, HealthReport[]>();
let nextId = 100;
const backend = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;

const outcome = (name: string) => edge.metric('dbproxy_causal_reads_total', { protocol: 'pg', outcome: name });
const admin = async (server: PostgresServer): Promise<Client> => {
  const c = new Client({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' });
  await c.connect();
  return c;
};

/** Two health reports of `name` (so the edge, on the same bus, has had one too) at or past the primary's current WAL position. */
async function topologySaw(name: string): Promise<void> {
  const target = parseLsn((await primary.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn as string) as bigint;
  latest.set(name, []);
  await waitFor(() => (latest.get(name) ?? []).filter((r) => (parseLsn(r.position) ?? -1n) >= target).length >= 2, { timeoutMs: 10_000, description: `topology reports ${name} replayed the write` });
}

beforeAll(async () => {
  pg = await startPostgres({ replicas: 2 });
  await requirePoolPassword(pg);
  const [fast, slow] = pg.replicas as [PostgresServer, PostgresServer];
  edge = await startEdge(
    [
      { name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra: backend },
      { name: 'fast', host: fast.host, port: fast.port, role: 'replica', extra: backend },
      { name: 'slow', host: slow.host, port: slow.port, role: 'replica', extra: backend },
    ],
    'routing_mode = "transaction"\nread_consistency = "causal"\ncausal_wait_ms = 1500\nread_after_write_seconds = 60\nmax_replica_lag_seconds = 3600\nallowed_functions = ["inet_server_port"]',
    '[[users]]\nname = "app"\npassword = "app-secret"',
  );
  reports = subscribeMessages(edge.runtime.bus, Subjects.health.pattern({ protocol: 'postgres' }), (r) => void latest.get(r.backend)?.push(r));
  primary = await admin(pg.primary);
  await primary.query('CREATE TABLE acc (id int PRIMARY KEY, v int)');
  await primary.query('GRANT ALL ON acc TO ' + POOL_USER);
  await pg.waitForReplicaCatchUp();
  slowAdmin = await admin(slow);
});

afterAll(async () => {
  reports?.unsubscribe();
  await primary?.end();
  await slowAdmin?.end();
  await edge?.stop();
  await pg?.destroy();
});

describe('causal reads with replay positions from topology (PostgreSQL, transaction mode)', () => {
  it('reads go at once to the replica topology saw replay the commit, not to one that stopped receiving WAL', async () => {
    const fastPort = (pg.replicas[0] as PostgresServer).port;
    const conninfo = (await slowAdmin.query('SHOW primary_conninfo')).rows[0].primary_conninfo as string;
    await slowAdmin.query("ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=1 connect_timeout=1'");
    await slowAdmin.query('SELECT pg_reload_conf()');
    try {
      await waitFor(async () => (await slowAdmin.query("SELECT count(*)::int AS n FROM pg_stat_wal_receiver WHERE status = 'streaming'")).rows[0].n === 0, { timeoutMs: 15_000, description: 'slow replica stopped streaming' });
      await edge.waitForBackend('slow', (b) => b.healthy === true && b.lagging === false, 'stale replica still in read selection', 20_000);
      const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'app-secret', database: 'postgres' });
      await c.connect();
      const before = { now: await outcome('replica_now'), waited: await outcome('replica_after_wait'), primary: await outcome('primary') };
      for (let i = 0; i < 8; i++) {
        const id = nextId++;
        await c.query('INSERT INTO acc VALUES ($1, $2)', [id, id * 10]);
        await topologySaw('fast');
        const { rows } = await c.query('SELECT v, inet_server_port() AS port FROM acc WHERE id = $1', [id]);
        expect({ v: rows[0]?.v, port: rows[0]?.port }).toEqual({ v: id * 10, port: fastPort });
      }
      await c.end();
      expect((await outcome('replica_now')) - before.now).toBe(8);
      expect((await outcome('replica_after_wait')) - before.waited).toBe(0);
      expect((await outcome('primary')) - before.primary).toBe(0);
    } finally {
      await slowAdmin.query(`ALTER SYSTEM SET primary_conninfo = '${conninfo.replace(/'/g, "''")}'`);
      await slowAdmin.query('SELECT pg_reload_conf()');
    }
  });
});
