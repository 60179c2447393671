// Transaction mode end to end (spec 003): frontend SCRAM/md5, pooled SCRAM-authenticated backend
// connections, simple and extended protocol, routing and pinning, limits, cancel, poisoning; reads
// following the real topology service (paused WAL replay, shun, drain); one span per query.
import { Client } from 'pg';
import { SpanStatusCode, SpanKind } from '@opentelemetry/api';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { primaryAndReplica, startEdge, type EdgeHarness } from './harness';
import { cancelRequest, errorOf, RawClient } from './raw-client';
import { recordSpans } from './span-recorder';

jest.setTimeout(90_000);

const spans = recordSpans();

let pg: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
const backend = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;

export const connect = async (port: number, user = 'app', password = 'app-secret', extra: Record<string, unknown> = {}) => {
  const c = new Client({ host: '127.0.0.1', port, user, password, database: 'postgres', ...extra });
  await c.connect();
  return c;
};

beforeAll(async () => {
  pg = await startPostgres({ replicas: 1 });
  await requirePoolPassword(pg);
  edge = await startEdge(
    primaryAndReplica(pg, backend),
    `routing_mode = "transaction"
pool_max_per_backend = 10
max_result_rows = 1000
max_result_bytes = 1000000
query_timeout_seconds = 3
read_after_write_seconds = 2
allowed_functions = ["balance_of", "reports.\\"Total\\""]`,
    `[[users]]
name = "app"
password = "app-secret"
[[users]]
name = "legacy"
password = "legacy-secret"
postgres_auth_method = "md5"`,
  );
  const setup = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await setup.connect();
  await setup.query('CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL, note text)');
  await setup.query("INSERT INTO accounts SELECT g, 1000, 'seed' FROM generate_series(1, 2000) g");
  await setup.query('CREATE FUNCTION balance_of(int) RETURNS bigint STABLE LANGUAGE sql AS $$ SELECT balance FROM accounts WHERE id = $1 $$');
  await setup.query('CREATE FUNCTION note_of(int) RETURNS text STABLE LANGUAGE sql AS $$ SELECT note FROM accounts WHERE id = $1 $$');
  await setup.query('CREATE SCHEMA reports');
  await setup.query('CREATE FUNCTION reports."Total"() RETURNS numeric STABLE LANGUAGE sql AS $$ SELECT sum(balance) FROM accounts $$');
  await setup.query('CREATE FUNCTION reports.total() RETURNS numeric STABLE LANGUAGE sql AS $$ SELECT 0::numeric $$');
  await setup.end();
  await pg.waitForReplicaCatchUp();
});

afterAll(async () => {
  await edge?.stop();
  await pg?.destroy();
});

/** Runs one statement on a server directly (not through the edge), as the postgres superuser. */
async function direct<T = Record<string, unknown>>(server: PostgresServer, sql: string): Promise<T[]> {
  const c = new Client({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

/** The replica's backend running `sql` now (the pooled connection a read of ours is on). */
async function sleepingBackend(sql: string): Promise<number> {
  const rows = await direct<{ pid: number }>(pg.replicas[0], `SELECT pid FROM pg_stat_activity WHERE query = '${sql}' AND state = 'active'`);
  expect(rows).toHaveLength(1);
  return rows[0].pid;
}

async function backendAlive(pid: number): Promise<boolean> {
  return (await direct(pg.replicas[0], `SELECT 1 FROM pg_stat_activity WHERE pid = ${pid}`)).length > 0;
}

/** Where a fresh client's read runs: 'on' is the replica (a standby is read-only), 'off' the primary. */
async function readsRunWhere(sql = "SELECT current_setting('transaction_read_only') AS ro"): Promise<Record<string, unknown>> {
  const c = await connect(edge.rwPort);
  try {
    return (await c.query(sql)).rows[0];
  } finally {
    await c.end();
  }
}

describe('frontend authentication against [[users]]', () => {
  it('accepts SCRAM-SHA-256 and md5 users and answers like PostgreSQL', async () => {
    for (const [user, password] of [['app', 'app-secret'], ['legacy', 'legacy-secret']]) {
      const c = await connect(edge.rwPort, user, password);
      expect((await c.query('SELECT current_user AS u')).rows[0].u).toBe(POOL_USER);
      await c.end();
    }
  });

  it.each([
    ['a wrong password', 'app', 'nope'],
    ['an unknown user', 'mallory', 'x'],
  ])('refuses %s with 28P01', async (_what, user, password) => {
    await expect(connect(edge.rwPort, user, password)).rejects.toMatchObject({ code: '28P01' });
  });
});

describe('routing and pinning', () => {
  it('sends reads to a replica and writes to the primary', async () => {
    const c = await connect(edge.rwPort);
    expect((await c.query("SELECT current_setting('transaction_read_only') AS ro")).rows[0].ro).toBe('on');
    await c.query('UPDATE accounts SET note = $1 WHERE id = 1', ['written']);
    await c.end();
    // Counted per statement as plain numbers, added to the counter when scraped.
    const metrics = await edge.metrics();
    expect(metrics).toMatch(/dbproxy_pg_query_routes_total\{route="replica",listener="read_write"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/dbproxy_pg_query_routes_total\{route="primary",listener="read_write"[^}]*\} [1-9]/);
  });

  it('runs reads calling a user-defined function on the primary unless allowed_functions names it', async () => {
    const ro = "current_setting('transaction_read_only') AS ro";
    expect(await readsRunWhere(`SELECT balance_of(3) AS v, ${ro}`)).toEqual({ v: '1000', ro: 'on' });
    expect(await readsRunWhere(`SELECT note_of(3) AS v, ${ro}`)).toEqual({ v: 'seed', ro: 'off' });
    // a quoted entry matches only that exact name, as PostgreSQL resolves it
    expect((await readsRunWhere(`SELECT reports."Total"() > 0 AS v, ${ro}`)).ro).toBe('on');
    expect(await readsRunWhere(`SELECT reports.total() AS v, ${ro}`)).toEqual({ v: '0', ro: 'off' });
    const c = await connect(edge.rwPort);
    try {
      const extended = await c.query({ text: `SELECT balance_of($1) AS v, ${ro}`, values: [4] });
      expect(extended.rows[0]).toEqual({ v: '1000', ro: 'on' });
    } finally {
      await c.end();
    }
  });

  it('reads its own write at once (read-after-write window) through the primary', async () => {
    const c = await connect(edge.rwPort);
    await c.query('INSERT INTO accounts VALUES (5001, 7, $1)', ['fresh']);
    const row = (await c.query("SELECT note, current_setting('transaction_read_only') AS ro FROM accounts WHERE id = 5001")).rows[0];
    expect(row).toEqual({ note: 'fresh', ro: 'off' });
    await c.end();
  });

  it('keeps one primary connection from BEGIN to COMMIT', async () => {
    const c = await connect(edge.rwPort);
    await c.query('BEGIN');
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const row = (await c.query('SELECT pg_backend_pid() AS p, pg_is_in_recovery() AS standby')).rows[0];
      seen.add(`${row.p}/${row.standby}`);
    }
    await c.query('UPDATE accounts SET balance = balance - 1 WHERE id = 2');
    await c.query('COMMIT');
    expect([...seen]).toHaveLength(1); // one backend...
    expect([...seen][0]).toMatch(/\/false$/); // ...and it is the primary
    await c.end();
  });

  it('keeps the backend of a session that ran SET', async () => {
    const c = await connect(edge.rwPort);
    await c.query("SET application_name = 'pinned-by-set'");
    const seen = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const row = (await c.query('SELECT pg_backend_pid() AS p, current_setting($1) AS a', ['application_name'])).rows[0];
      seen.add(`${row.p}/${row.a}`);
    }
    expect([...seen]).toHaveLength(1);
    expect([...seen][0]).toMatch(/\/pinned-by-set$/);
    await c.end();
  });

  it('refuses writes on the read-only listener with 25006', async () => {
    const c = await connect(edge.roPort);
    await expect(c.query('DELETE FROM accounts WHERE id = 3')).rejects.toMatchObject({ code: '25006' });
    expect((await c.query('SELECT count(*)::int AS n FROM accounts WHERE id <= 10')).rows[0].n).toBe(10);
    await c.end();
  });
});

describe('prepared statements', () => {
  it('re-prepares named statements on whichever pooled connection runs them', async () => {
    const clients = await Promise.all(Array.from({ length: 12 }, () => connect(edge.rwPort)));
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        clients.map(async (c, i) => {
          const r = await c.query({ name: 'balance_of', text: 'SELECT balance, $2::text AS tag FROM accounts WHERE id = $1', values: [100 + i, `r${round}`] });
          expect(r.rows).toEqual([{ balance: '1000', tag: `r${round}` }]);
        }),
      );
    }
    await Promise.all(clients.map((c) => c.end()));
  });

  it('reports an unknown statement name like PostgreSQL (26000) and keeps the session usable', async () => {
    const c = await RawClient.connect(edge.rwPort);
    await c.startup({ user: 'app', database: 'postgres' }, 'app-secret');
    c.send(
      { type: 'Parse', statement: 's1', sql: 'SELECT $1::int AS v', paramTypes: [] },
      { type: 'Sync' },
      { type: 'Bind', portal: '', statement: 'never_prepared', paramFormats: [], params: [], resultFormats: [] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Sync' },
    );
    expect(errorOf(await c.untilReady())).toBeUndefined();
    expect(errorOf(await c.untilReady())).toMatchObject({ code: '26000', message: expect.stringContaining('"never_prepared" does not exist') });
    c.send(
      { type: 'Bind', portal: '', statement: 's1', paramFormats: [0], params: [Buffer.from('2')], resultFormats: [] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Sync' },
    );
    const after = await c.untilReady();
    expect(errorOf(after)).toBeUndefined();
    expect(after.map((m) => m.type)).toContain('DataRow');
    c.close();
  });
});

describe('limits and failures', () => {
  it('fails a result over max_result_rows with a clear error, and the next query works', async () => {
    const c = await connect(edge.rwPort);
    await expect(c.query('SELECT g FROM generate_series(1, 5000) g')).rejects.toMatchObject({ code: '54000', message: expect.stringContaining('max_result_rows') });
    expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await c.end();
  });

  it('fails a result over max_result_bytes inside a transaction, aborting it', async () => {
    const c = await connect(edge.rwPort);
    await c.query('BEGIN');
    await expect(c.query("SELECT repeat('x', 400000) FROM generate_series(1, 3)")).rejects.toMatchObject({ code: '54000' });
    await expect(c.query('SELECT 1')).rejects.toMatchObject({ code: '25P02' });
    await c.query('ROLLBACK');
    expect((await c.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    await c.end();
  });

  it('serves what spec 003 refused and PgBouncer serves: any type, COPY, several statements in one query', async () => {
    const c = await connect(edge.rwPort);
    expect((await c.query("SELECT '6d2f0b4e-8f4f-4d7e-9a43-0b5b4c4c1a11'::uuid AS u")).rows).toEqual([{ u: '6d2f0b4e-8f4f-4d7e-9a43-0b5b4c4c1a11' }]);
    await c.query('COPY (SELECT 1) TO STDOUT');
    const both = (await c.query('SELECT 1 AS one; SELECT 2 AS two')) as unknown as { rows: unknown[] }[];
    expect(both.map((r) => r.rows)).toEqual([[{ one: 1 }], [{ two: 2 }]]);
    expect((await c.query('SELECT 3 AS three')).rows).toEqual([{ three: 3 }]);
    await c.end();
  });

  it('cancels an in-flight query and closes its pooled connection', async () => {
    const c = await connect(edge.rwPort);
    const started = Date.now();
    const sleeping = c.query('SELECT pg_sleep(30)').then(() => 'finished', (err: { code?: string }) => err.code);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sleeper = await sleepingBackend('SELECT pg_sleep(30)');
    const key = c as unknown as { processID: number; secretKey: number };
    await cancelRequest(edge.rwPort, key.processID, key.secretKey);
    expect(await sleeping).toBe('57014');
    expect(Date.now() - started).toBeLessThan(1500);
    expect((await c.query('SELECT 4 AS four')).rows).toEqual([{ four: 4 }]);
    await c.end();
    const metrics = await edge.metrics();
    expect(metrics).toMatch(/dbproxy_pg_cancel_requests_total\{[^}]*outcome="forwarded"[^}]*\} 1/);
    await waitFor(async () => !(await backendAlive(sleeper))); // the cancelled pooled connection was closed
  });

  it('times a query out after query_timeout_seconds, closing the connection', async () => {
    const c = await connect(edge.rwPort);
    const started = Date.now();
    const timedOut = expect(c.query('SELECT pg_sleep(20)')).rejects.toMatchObject({ code: '57014', message: expect.stringContaining('query_timeout_seconds') });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sleeper = await sleepingBackend('SELECT pg_sleep(20)');
    await timedOut;
    expect(Date.now() - started).toBeLessThan(5000);
    await waitFor(async () => !(await backendAlive(sleeper))); // the timed-out pooled connection was closed
    expect((await c.query('SELECT 5 AS five')).rows).toEqual([{ five: 5 }]);
    await c.end();
  });

  it('poisons a pinned session whose backend is lost: it must reconnect', async () => {
    const c = await connect(edge.rwPort);
    c.on('error', () => undefined);
    const failure = new Promise<{ code?: string; message: string }>((resolve) => c.once('error', resolve));
    await c.query('SET statement_timeout = 0');
    const pid = (await c.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    const admin = new Client({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await admin.end();
    expect(await failure).toMatchObject({ code: '08006', message: expect.stringContaining('reconnect') });
    await expect(c.query('SELECT 1')).rejects.toThrow();
    const fresh = await connect(edge.rwPort);
    expect((await fresh.query('SELECT 6 AS six')).rows).toEqual([{ six: 6 }]);
    await fresh.end();
  });
});

describe('under load', () => {
  it('serves 200 concurrent clients over a pool of 10 with a mixed workload, without errors', async () => {
    const clients = await Promise.all(Array.from({ length: 200 }, () => connect(edge.rwPort)));
    await Promise.all(
      clients.map(async (c, i) => {
        const id = 1 + (i % 1000);
        for (let k = 0; k < 5; k++) {
          if (k % 5 === 1) {
            await c.query('BEGIN');
            await c.query('UPDATE accounts SET balance = balance + 1 WHERE id = $1', [id]);
            await c.query('COMMIT');
          } else if (k % 5 === 3) {
            await c.query({ name: 'by_id', text: 'SELECT balance FROM accounts WHERE id = $1', values: [id] });
          } else {
            await c.query('SELECT count(*) FROM accounts WHERE id < $1', [id]);
          }
        }
      }),
    );
    await Promise.all(clients.map((c) => c.end()));
    const report = await edge.backends();
    const pool = report.backends.find((b) => b['name'] === 'primary')?.['transaction_pool'] as Record<string, number>;
    expect(pool.total).toBeLessThanOrEqual(10);
    expect(pool.checkouts).toBeGreaterThan(200);
    await waitFor(async () => (await edge.backends()).backends.every((b) => (b['transaction_pool'] as Record<string, number>).in_use === 0), { timeoutMs: 5000 });
  });
});

describe('following the topology service', () => {
  it('moves reads off a replica whose WAL replay is paused (lagging), and back once it replays again', async () => {
    const replica = pg.replicas[0];
    const probe = "SELECT note, current_setting('transaction_read_only') AS ro FROM accounts WHERE id = 7001";
    await direct(replica, 'SELECT pg_wal_replay_pause()');
    try {
      await direct(pg.primary, "INSERT INTO accounts VALUES (7001, 1, 'written while replay paused')");
      await edge.waitForBackend('replica', (b) => b.lagging === true, 'topology to find the paused replica lagging');
      expect(await readsRunWhere(probe)).toEqual({ note: 'written while replay paused', ro: 'off' });
    } finally {
      await direct(replica, 'SELECT pg_wal_replay_resume()');
    }
    await edge.waitForBackend('replica', (b) => b.lagging === false, 'topology to find the replica caught up');
    expect(await readsRunWhere(probe)).toEqual({ note: 'written while replay paused', ro: 'on' });
  });

  it('moves reads off a replica shunned by a blue/green action, and back when it is unshunned', async () => {
    edge.bgdAction({ action: 'shun', backend: 'replica' });
    await edge.waitForBackend('replica', (b) => b.shunned === true, 'the shun in the edge view');
    expect(await readsRunWhere()).toEqual({ ro: 'off' });
    edge.bgdAction({ action: 'unshun', backend: 'replica' });
    await edge.waitForBackend('replica', (b) => b.shunned === false, 'the unshun in the edge view');
    expect(await readsRunWhere()).toEqual({ ro: 'on' });
  });

  it('closes a draining replica\'s pooled connections, reads from the primary until the drain deadline, then returns', async () => {
    const poolConnections = async () =>
      (await direct<{ n: number }>(pg.replicas[0], `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = '${POOL_USER}' AND application_name <> 'dbproxy-topology'`))[0].n;
    expect(await readsRunWhere()).toEqual({ ro: 'on' });
    expect(await poolConnections()).toBeGreaterThan(0);
    edge.bgdAction({ action: 'drain-backend', backend: 'replica', deadlineMs: 2500 });
    await edge.waitForBackend('replica', (b) => b.draining === true && b.transaction_pool?.['total'] === 0, 'the drained replica pool');
    await waitFor(async () => (await poolConnections()) === 0, { timeoutMs: 5000, description: 'the replica to see the pool connections close' });
    expect(await readsRunWhere()).toEqual({ ro: 'off' });
    await edge.waitForBackend('replica', (b) => b.draining === false, 'the drain deadline to pass');
    expect(await readsRunWhere()).toEqual({ ro: 'on' });
  });
});

describe('tracing', () => {
  const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
  const CLIENT_SPAN = 'b7ad6b7169203331';
  const comment = `/*traceparent='00-${TRACE_ID}-${CLIENT_SPAN}-01'*/`;
  const finished = (count: number, keep: (name: string) => boolean) =>
    waitFor(() => {
      const found = spans.getFinishedSpans().filter((s) => keep(s.name));
      return found.length >= count ? found : false;
    }, { timeoutMs: 5000, description: `${count} finished span(s)` });

  it('continues the client trace from a sqlcommenter traceparent, one span per query, fingerprints without literal values', async () => {
    spans.reset();
    const c = await connect(edge.rwPort);
    await c.query(`SELECT note FROM accounts WHERE id = 918273 AND note <> 'top-secret-literal' ${comment}`);
    await c.query({ text: `UPDATE accounts SET note = $1 WHERE id = 918274 ${comment}`, values: ['secret-parameter'] });
    await c.end();
    const ours = (await finished(4, (name) => name === 'SELECT accounts' || name === 'UPDATE accounts')).filter((s) => s.spanContext().traceId === TRACE_ID && s.kind === SpanKind.SERVER);
    expect(ours.map((s) => s.name).sort()).toEqual(['SELECT accounts', 'UPDATE accounts']);
    for (const span of ours) expect(span.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
    const [read, write] = ['SELECT accounts', 'UPDATE accounts'].map((name) => ours.find((s) => s.name === name));
    expect(read?.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'dbproxy.route': 'replica', 'dbproxy.backend': 'replica', 'dbproxy.user': 'app', 'dbproxy.shard': 'default' });
    expect(write?.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'dbproxy.route': 'primary', 'dbproxy.backend': 'primary' });
    expect(read?.attributes['db.query.text']).toMatch(/^SELECT note FROM accounts WHERE id = \S+ AND note <> \S+$/);
    expect(write?.attributes['db.query.text']).toMatch(/^UPDATE accounts SET note = \S+ WHERE id = \S+$/);
    for (const span of ours) {
      expect(span.attributes['dbproxy.pool_wait_ms']).toBeGreaterThanOrEqual(0);
      expect(JSON.stringify(span.attributes)).not.toMatch(/91827[34]|secret|traceparent/);
    }
  });

  it('starts a trace of its own without a traceparent, marks held units, and records a failed statement\'s SQLSTATE', async () => {
    spans.reset();
    const c = await connect(edge.rwPort);
    await c.query('BEGIN');
    await expect(c.query('SELECT 1 / 0')).rejects.toMatchObject({ code: '22012' });
    await c.query('ROLLBACK');
    await c.end();
    const units = (await finished(6, (name) => /^(BEGIN|SELECT|ROLLBACK)\b/.test(name))).filter((s) => s.kind === SpanKind.SERVER);
    const [begin, failed, rollback] = ['BEGIN', 'SELECT', 'ROLLBACK'].map((op) => units.find((s) => s.attributes['db.operation.name'] === op));
    expect(begin?.parentSpanContext).toBeUndefined();
    expect(begin?.attributes).toMatchObject({ 'dbproxy.route': 'primary', 'dbproxy.backend': 'primary' });
    expect(failed?.attributes).toMatchObject({ 'dbproxy.held': 'transaction', 'dbproxy.pool_wait_ms': 0, 'db.response.status_code': '22012' });
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);
    expect(rollback?.attributes['dbproxy.held']).toBe('transaction');
  });
});
