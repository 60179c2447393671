// Transaction mode keeps each client's state its own and follows the protocol's less common paths:
// a connection that served anything but a replica-safe read is reset before another client gets
// it; temporary tables pin; Execute answered after a Flush (cursors fetching in steps) goes on;
// a backend lost after a Flush fails the batch at once; the read-after-write window opens at
// COMMIT; result types are checked even when the client sends no Describe.
import { Client } from 'pg';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { primaryAndReplica, startEdge, type EdgeHarness } from './harness';
import { errorOf, RawClient, rowsOf } from './raw-client';

jest.setTimeout(90_000);

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
const backend = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;

const connect = async (): Promise<Client> => {
  const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'app-secret', database: 'postgres' });
  await c.connect();
  return c;
};

const rawSession = async (): Promise<RawClient> => {
  const c = await RawClient.connect(edge.rwPort);
  await c.startup({ user: 'app', database: 'postgres' }, 'app-secret');
  return c;
};

const RO = "current_setting('transaction_read_only') AS ro";

beforeAll(async () => {
  pg = await startPostgres({ replicas: 1 });
  await requirePoolPassword(pg);
  // one pooled connection per backend: every client of a backend gets the same connection
  edge = await startEdge(
    primaryAndReplica(pg, backend),
    'routing_mode = "transaction"\npool_max_per_backend = 1\nread_after_write_seconds = 1\nquery_timeout_seconds = 20\nmax_result_rows = 1000',
    '[[users]]\nname = "app"\npassword = "app-secret"',
  );
  const setup = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await setup.connect();
  await setup.query('CREATE TABLE acc (id int PRIMARY KEY, v int)');
  await setup.query('INSERT INTO acc VALUES (1, 0)');
  await setup.query('CREATE SEQUENCE tickets');
  await setup.query('GRANT ALL ON acc, tickets TO ' + POOL_USER);
  await setup.end();
  await pg.waitForReplicaCatchUp();
});

afterAll(async () => {
  await edge?.stop();
  await pg?.destroy();
});

describe('state left on a pooled connection', () => {
  it('pins a session that made a temporary table with SELECT ... INTO TEMP; another client never sees it', async () => {
    const a = await connect();
    try {
      await a.query('SELECT 42 AS secret INTO TEMP leaked');
      // pinned: A's later statements run where its table is (a reset would have dropped it)
      expect((await a.query('SELECT secret FROM leaked')).rows).toEqual([{ secret: 42 }]);
    } finally {
      await a.end(); // a pinned session's connection is closed with it, never lent again
    }
    const b = await connect();
    const seen = await b.query('SELECT * FROM leaked FOR SHARE').then(
      (r) => r.rows,
      (e: { code?: string }) => e.code,
    );
    expect(seen).toBe('42P01'); // undefined_table
    await b.end();
  });

  it('resets a connection whose client called nextval() before another client gets it (no currval/lastval carried over)', async () => {
    const a = await connect();
    const [{ n, p: pidA }] = (await a.query("SELECT nextval('tickets')::int AS n, pg_backend_pid() AS p")).rows;
    expect(n).toBeGreaterThan(0);
    await a.end();
    const b = await connect();
    const lastval = await b.query('SELECT lastval()').then(
      (r) => r.rows,
      (e: { code?: string }) => e.code,
    );
    expect(lastval).toBe('55000'); // object_not_in_prerequisite_state: lastval is not yet defined in this session
    // and that ran on the same pooled primary connection as A's nextval (the pool holds one)
    expect((await b.query('SELECT pg_backend_pid() AS p, id FROM acc FOR UPDATE')).rows[0].p).toBe(pidA);
    await b.end();
  });
});

describe('extended protocol', () => {
  it.each([0, 2])('answers an Execute (max rows %d) followed by Flush at once, and the Sync after it', async (maxRows) => {
    const c = await rawSession();
    c.send(
      { type: 'Parse', statement: '', sql: 'SELECT g FROM generate_series(1, 5) g', paramTypes: [] },
      { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [] },
      { type: 'Describe', kind: 'P', name: '' },
      { type: 'Execute', portal: '', maxRows },
      { type: 'Flush' },
    );
    const first = [];
    for (;;) {
      const m = await c.next(3_000);
      first.push(m?.type);
      if (m === undefined || m.type === 'CommandComplete' || m.type === 'PortalSuspended') break;
    }
    expect(first[first.length - 1]).toBe(maxRows === 0 ? 'CommandComplete' : 'PortalSuspended');
    if (maxRows > 0) {
      c.send({ type: 'Execute', portal: '', maxRows: 0 }, { type: 'Flush' });
      for (let m = await c.next(3_000); m?.type !== 'CommandComplete'; m = await c.next(3_000)) expect(m?.type).toBe('DataRow');
    }
    const started = Date.now();
    c.send({ type: 'Sync' });
    const rest = await c.untilReady();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(errorOf(rest)).toBeUndefined();
    expect((await c.query('SELECT 7')).some((m) => m.type === 'DataRow')).toBe(true);
    c.close();
  });

  it('fails the rest of a batch at once with 08006 when its backend is lost after a Flush', async () => {
    const c = await rawSession();
    c.send(
      { type: 'Parse', statement: '', sql: 'SELECT pg_backend_pid() AS p, id FROM acc FOR UPDATE', paramTypes: [] },
      { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Flush' },
    );
    const answered = [];
    for (let m = await c.next(3_000); m !== undefined; m = m.type === 'CommandComplete' ? undefined : await c.next(3_000)) answered.push(m);
    const pid = Number(rowsOf(answered)[0][0]?.toString());
    const admin = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await admin.end();
    await new Promise((r) => setTimeout(r, 300));
    // a cursor client fetches the next rows with Execute + Flush and waits for them before any Sync
    c.send({ type: 'Execute', portal: '', maxRows: 0 }, { type: 'Flush' });
    const failure = await c.next(2_000);
    expect(failure).toMatchObject({ type: 'ErrorResponse', code: '08006' });
    c.send({ type: 'Execute', portal: '', maxRows: 0 }, { type: 'Sync' });
    const rest = await c.untilReady();
    expect(rest.map((m) => m.type)).toEqual(['ReadyForQuery']); // skipped to Sync, as PostgreSQL does after an error
    expect((await c.query('SELECT 8')).some((m) => m.type === 'DataRow')).toBe(true);
    c.close();
  });

  it('sends the error of a unit that fails before its Sync at once (a result over max_result_rows after a Flush)', async () => {
    const c = await rawSession();
    c.send(
      { type: 'Parse', statement: '', sql: 'SELECT g FROM generate_series(1, 5000) g', paramTypes: [] },
      { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [] },
      { type: 'Describe', kind: 'P', name: '' },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Flush' },
    );
    let m = await c.next(3_000);
    while (m !== undefined && m.type !== 'ErrorResponse') m = await c.next(3_000);
    expect(m).toMatchObject({ type: 'ErrorResponse', code: '54000' });
    c.send({ type: 'Sync' });
    expect((await c.untilReady()).map((x) => x.type)).toEqual(['ReadyForQuery']);
    expect((await c.query('SELECT 9')).some((x) => x.type === 'DataRow')).toBe(true);
    c.close();
  });

  it('resets no connection for a replica-safe read whose batch was split by a Flush', async () => {
    const c = await rawSession();
    c.send(
      { type: 'Parse', statement: '', sql: 'SELECT v FROM acc WHERE id = 1', paramTypes: [] },
      { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [] },
      { type: 'Describe', kind: 'P', name: '' },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Flush' },
    );
    for (let m = await c.next(3_000); m?.type !== 'CommandComplete'; m = await c.next(3_000)) expect(m).toBeDefined();
    c.send({ type: 'Sync' });
    expect(errorOf(await c.untilReady())).toBeUndefined();
    c.close();
    // the replica's one pooled connection last ran the read, not a ROLLBACK; DISCARD ALL after it
    await new Promise((r) => setTimeout(r, 200));
    const standby = new Client({ host: pg.replicas[0].host, port: pg.replicas[0].port, user: 'postgres', database: 'postgres' });
    await standby.connect();
    try {
      // (the topology service's health check logs in as the same user)
      const rows = (await standby.query(`SELECT query FROM pg_stat_activity WHERE usename = '${POOL_USER}' AND query NOT LIKE 'SELECT pg_is_in_recovery()%'`)).rows;
      expect(rows.map((r) => r.query)).toEqual(['SELECT v FROM acc WHERE id = 1']);
    } finally {
      await standby.end();
    }
  });

  it('forwards result and declared parameter types of any kind, with or without a Describe, adding nothing', async () => {
    const c = await rawSession();
    c.send(
      { type: 'Parse', statement: '', sql: "SELECT '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid AS u", paramTypes: [] },
      { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [1] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Sync' },
    );
    const noDescribe = await c.untilReady();
    expect(noDescribe.map((m) => m.type)).toEqual(['ParseComplete', 'BindComplete', 'DataRow', 'CommandComplete', 'ReadyForQuery']);
    expect(rowsOf(noDescribe)).toEqual([[Buffer.from('6ba7b8109dad11d180b400c04fd430c8', 'hex')]]);
    c.send(
      { type: 'Parse', statement: '', sql: 'SELECT $1 IS NOT NULL AS ok', paramTypes: [2950] },
      { type: 'Bind', portal: '', statement: '', paramFormats: [0], params: [Buffer.from('6ba7b810-9dad-11d1-80b4-00c04fd430c8')], resultFormats: [] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Sync' },
    );
    const declared = await c.untilReady();
    expect(errorOf(declared)).toBeUndefined();
    expect(rowsOf(declared)).toEqual([[Buffer.from('t')]]);
    // a carried type without a Describe still runs, its rows forwarded and nothing extra
    c.send(
      { type: 'Parse', statement: '', sql: 'SELECT 40 + 2 AS answer', paramTypes: [] },
      { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [], resultFormats: [] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Sync' },
    );
    const carried = await c.untilReady();
    expect(carried.map((m) => m.type)).toEqual(['ParseComplete', 'BindComplete', 'DataRow', 'CommandComplete', 'ReadyForQuery']);
    expect(rowsOf(carried)[0][0]?.toString()).toBe('42');
    c.close();
  });
});

describe('read-after-write', () => {
  it('opens the window when a transaction that wrote commits, not when it wrote', async () => {
    const c = await connect();
    await c.query('BEGIN');
    await c.query('UPDATE acc SET v = v + 1 WHERE id = 1');
    await c.query('SELECT pg_sleep(1.3)'); // longer than read_after_write_seconds
    await c.query('COMMIT');
    expect((await c.query(`SELECT ${RO}`)).rows).toEqual([{ ro: 'off' }]); // the primary
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await c.query(`SELECT ${RO}`)).rows).toEqual([{ ro: 'on' }]); // the window closed: a replica
    await c.end();
  });
});
