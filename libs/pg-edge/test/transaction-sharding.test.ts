// Statement-level sharding in transaction mode ([[postgres.sharding.rules]]): two real PostgreSQL
// shards (s0 with a streaming replica), node-postgres simple and extended protocol, rows checked on
// each shard directly; every fail-closed rule with its SQLSTATE and untouched data; transactions
// pinned to one shard; users.shards per statement; reads on every shard with multi_shard = "all_shards".
import { Client } from 'pg';
import { createShardMap, type ShardMapSpec } from '@dbproxy/routing';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type BackendSpec, type EdgeHarness } from './harness';
import { errorOf, RawClient, rowsOf } from './raw-client';

jest.setTimeout(120_000);

const HASH: ShardMapSpec = { kind: 'hash', shards: ['s0', 's1'] };
const RANGE: ShardMapSpec = { kind: 'range', ranges: [{ to: 0n, shard: 's1' }, { from: 0n, to: 1000n, shard: 's0' }, { from: 1000n, shard: 's1' }] };
const VALUE: ShardMapSpec = { kind: 'value', values: { eu: 's0', us: 's1' }, defaultShard: 's1' };
const hashShard = (key: number | string) => createShardMap(HASH).shardFor(key) as string;

const RULES = `
[postgres.sharding]
default_shard = "s0"
MULTI
[[postgres.sharding.rules]]
table = "orders"
column = "customer_id"
map = { kind = "hash", shards = ["s0", "s1"] }
[[postgres.sharding.rules]]
table = "customers"
column = "id"
map = { kind = "hash", shards = ["s0", "s1"] }
[[postgres.sharding.rules]]
table = "events"
column = "account_id"
map = { kind = "range", ranges = [{ to = 0, shard = "s1" }, { from = 0, to = 1000, shard = "s0" }, { from = 1000, shard = "s1" }] }
[[postgres.sharding.rules]]
table = "regional"
column = "region"
map = { kind = "value", values = { eu = "s0", us = "s1" }, default_shard = "s1" }
[[postgres.sharding.rules]]
table = "sessions"
column = "token"
map = { kind = "hash", shards = ["s0", "s1"] }
`;

const USERS = `[[users]]
name = "app"
password = "app-secret"
[[users]]
name = "s0only"
password = "s0-secret"
shards = ["s0"]`;

const POSTGRES = `routing_mode = "transaction"
pool_max_per_backend = 8
read_after_write_seconds = 0
max_result_rows = 1000`;

let s0: ReplicatedServers<PostgresServer>;
let s1: ReplicatedServers<PostgresServer>;
let edge: EdgeHarness;
const credentials = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;

function backends(): BackendSpec[] {
  return [
    { name: 's0-primary', host: s0.primary.host, port: s0.primary.port, role: 'primary', shard: 's0', extra: credentials },
    { name: 's0-replica', host: s0.replicas[0].host, port: s0.replicas[0].port, role: 'replica', shard: 's0', extra: credentials },
    { name: 's1-primary', host: s1.primary.host, port: s1.primary.port, role: 'primary', shard: 's1', extra: credentials },
  ];
}

const connect = async (port: number, user = 'app', password = 'app-secret') => {
  const c = new Client({ host: '127.0.0.1', port, user, password, database: 'postgres' });
  await c.connect();
  return c;
};

/** Runs one statement on a shard's primary directly (not through the edge). */
async function direct<T = Record<string, unknown>>(server: PostgresServer, sql: string): Promise<T[]> {
  const c = new Client({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

const primaryOf = (shard: string) => (shard === 's0' ? s0.primary : s1.primary);

/** Every table's rows on both shards, to show a refused statement changed nothing anywhere. */
async function snapshot(): Promise<string> {
  const parts: string[] = [];
  for (const server of [s0.primary, s1.primary]) {
    for (const table of ['orders', 'customers', 'events', 'regional', 'sessions']) {
      parts.push(JSON.stringify(await direct(server, `SELECT * FROM ${table} ORDER BY 1, 2`)));
    }
    parts.push(JSON.stringify(await direct(server, "SELECT column_name FROM information_schema.columns WHERE table_name = 'orders' ORDER BY 1")));
  }
  return parts.join('\n');
}

/** The error a statement gets through the edge: SQLSTATE and the dbproxy code in DETAIL. */
async function refusal(client: Client, text: string, values?: unknown[]): Promise<{ code: string; detail: string; message: string }> {
  const err = (await client.query(text, values).then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: string; detail: string; message: string } | undefined;
  if (err === undefined) throw new Error(`expected ${text} to be refused`);
  return { code: err.code, detail: err.detail, message: err.message };
}

beforeAll(async () => {
  [s0, s1] = await Promise.all([startPostgres({ replicas: 1 }), startPostgres({ replicas: 0 })]);
  await requirePoolPassword(s0);
  await requirePoolPassword(s1);
  for (const server of [s0.primary, s1.primary]) {
    await direct(server, 'CREATE TABLE orders (id int PRIMARY KEY, customer_id bigint NOT NULL, note text)');
    await direct(server, 'CREATE TABLE customers (id bigint PRIMARY KEY, name text)');
    await direct(server, 'CREATE TABLE events (id int PRIMARY KEY, account_id bigint NOT NULL, kind text)');
    await direct(server, 'CREATE TABLE regional (id int PRIMARY KEY, region text NOT NULL, label text)');
    await direct(server, 'CREATE TABLE sessions (token text PRIMARY KEY, owner text)');
  }
  await s0.waitForReplicaCatchUp();
  edge = await startEdge(backends(), `${POSTGRES}\n${RULES.replace('MULTI', 'multi_shard = "reject"')}`, USERS);
});

afterAll(async () => {
  await edge?.stop();
  await Promise.all([s0?.destroy(), s1?.destroy()]);
});

describe('statement sharding in transaction mode', () => {
  it('places hash-sharded rows by the map (simple protocol) and reads them back by key', async () => {
    const c = await connect(edge.rwPort);
    try {
      for (let k = 1; k <= 6; k++) await c.query(`INSERT INTO orders (id, customer_id, note) VALUES (${k}, ${k}, 'simple-${k}')`);
      for (let k = 1; k <= 6; k++) {
        const on = await direct<{ id: number }>(primaryOf(hashShard(k)), `SELECT id FROM orders WHERE customer_id = ${k}`);
        const off = await direct<{ id: number }>(primaryOf(hashShard(k) === 's0' ? 's1' : 's0'), `SELECT id FROM orders WHERE customer_id = ${k}`);
        expect([on.length, off.length]).toEqual([1, 0]);
      }
      expect(new Set([1, 2, 3, 4, 5, 6].map(hashShard))).toEqual(new Set(['s0', 's1'])); // both shards are used
      await s0.waitForReplicaCatchUp();
      for (let k = 1; k <= 6; k++) expect((await c.query(`SELECT note FROM orders WHERE customer_id = ${k}`)).rows).toEqual([{ note: `simple-${k}` }]);
    } finally {
      await c.end();
    }
  });

  it('routes extended-protocol statements by a parameter that is the key, preparing them on whichever shard', async () => {
    const c = await connect(edge.rwPort);
    try {
      for (let k = 11; k <= 16; k++) await c.query('INSERT INTO orders (id, customer_id, note) VALUES ($1, $2, $3)', [k, k, `extended-${k}`]);
      // the same named statement executed with keys of both shards
      for (let k = 11; k <= 16; k++) {
        const res = await c.query({ name: 'by-customer', text: 'SELECT id, note FROM orders WHERE customer_id = $1', values: [k] });
        expect(res.rows).toEqual([{ id: k, note: `extended-${k}` }]);
        expect(await direct(primaryOf(hashShard(k)), `SELECT note FROM orders WHERE id = ${k}`)).toEqual([{ note: `extended-${k}` }]);
      }
      await c.query('UPDATE orders SET note = $1 WHERE customer_id = $2', ['changed', 12]);
      expect(await direct(primaryOf(hashShard(12)), 'SELECT note FROM orders WHERE id = 12')).toEqual([{ note: 'changed' }]);
      await c.query('DELETE FROM orders WHERE customer_id = $1', [13]);
      expect(await direct(primaryOf(hashShard(13)), 'SELECT id FROM orders WHERE id = 13')).toEqual([]);
    } finally {
      await c.end();
    }
  });

  it('reads binary int4, int8 and numeric key parameters, and refuses a key of a type it cannot read', async () => {
    const raw = await RawClient.connect(edge.rwPort);
    try {
      await raw.startup({ user: 'app', database: 'postgres' }, 'app-secret');
      const select = async (oid: number, value: Buffer) => {
        raw.send(
          { type: 'Parse', statement: '', sql: 'SELECT note FROM orders WHERE customer_id = $1', paramTypes: [oid] },
          { type: 'Bind', portal: '', statement: '', paramFormats: [1], params: [value], resultFormats: [0] },
          { type: 'Execute', portal: '', maxRows: 0 },
          { type: 'Sync' },
        );
        return raw.untilReady();
      };
      const int4 = Buffer.alloc(4);
      int4.writeInt32BE(14);
      const int8 = Buffer.alloc(8);
      int8.writeBigInt64BE(15n);
      const numeric = Buffer.from([0, 1, 0, 0, 0, 0, 0, 0, 0, 16]); // 16: one base-10000 digit, weight 0, positive, scale 0
      expect(rowsOf(await select(23, int4)).map((r) => r[0]?.toString())).toEqual(['extended-14']);
      expect(rowsOf(await select(20, int8)).map((r) => r[0]?.toString())).toEqual(['extended-15']);
      expect(rowsOf(await select(1700, numeric)).map((r) => r[0]?.toString())).toEqual(['extended-16']);
      const float8 = Buffer.alloc(8);
      float8.writeDoubleBE(14);
      const refused = await select(701, float8);
      expect(errorOf(refused)).toMatchObject({ code: '42804' });
      expect(errorOf(refused)?.message).toContain('parameter $1 (type OID 701, binary format)');
      expect(refused[refused.length - 1]).toMatchObject({ type: 'ReadyForQuery', status: 'I' });
    } finally {
      raw.close();
    }
  });

  it('places range-sharded rows, negative keys included, through both protocols', async () => {
    const c = await connect(edge.rwPort);
    const range = createShardMap(RANGE);
    try {
      const keys = [-500, -1, 0, 999, 1000, 250000];
      for (const [i, k] of keys.entries()) {
        if (i % 2 === 0) await c.query(`INSERT INTO events (id, account_id, kind) VALUES (${i}, ${k}, 'k${k}')`);
        else await c.query('INSERT INTO events (id, account_id, kind) VALUES ($1, $2, $3)', [i, k, `k${k}`]);
      }
      for (const k of keys) {
        const shard = range.shardFor(k) as string;
        expect(await direct(primaryOf(shard), `SELECT kind FROM events WHERE account_id = ${k}`)).toEqual([{ kind: `k${k}` }]);
        expect(await direct(primaryOf(shard === 's0' ? 's1' : 's0'), `SELECT kind FROM events WHERE account_id = ${k}`)).toEqual([]);
      }
      expect(range.shardFor(-500)).toBe('s1');
      expect((await c.query('SELECT kind FROM events WHERE account_id = $1', [-500])).rows).toEqual([{ kind: 'k-500' }]);
      expect((await c.query('SELECT kind FROM events WHERE account_id = -1')).rows).toEqual([{ kind: 'k-1' }]);
    } finally {
      await c.end();
    }
  });

  it('places value-mapped string keys (and the default) and hash-sharded string keys', async () => {
    const c = await connect(edge.rwPort);
    const value = createShardMap(VALUE);
    try {
      await c.query("INSERT INTO regional (id, region, label) VALUES (1, 'eu', 'Paris')");
      await c.query('INSERT INTO regional (id, region, label) VALUES ($1, $2, $3)', [2, 'us', 'Austin']);
      await c.query("INSERT INTO regional (id, region, label) VALUES (3, 'apac', 'Tokyo')");
      for (const [region, label] of [['eu', 'Paris'], ['us', 'Austin'], ['apac', 'Tokyo']]) {
        expect(await direct(primaryOf(value.shardFor(region) as string), `SELECT label FROM regional WHERE region = '${region}'`)).toEqual([{ label }]);
      }
      expect([value.shardFor('eu'), value.shardFor('us'), value.shardFor('apac')]).toEqual(['s0', 's1', 's1']);
      const tokens = ['alpha', 'bravo', 'echo', 'foxtrot'];
      for (const t of tokens) await c.query('INSERT INTO sessions (token, owner) VALUES ($1, $2)', [t, `owner-${t}`]);
      for (const t of tokens) {
        expect(await direct(primaryOf(hashShard(t)), `SELECT owner FROM sessions WHERE token = '${t}'`)).toEqual([{ owner: `owner-${t}` }]);
        expect((await c.query(`SELECT owner FROM sessions WHERE token = '${t}'`)).rows).toEqual([{ owner: `owner-${t}` }]);
      }
      expect(new Set(tokens.map(hashShard))).toEqual(new Set(['s0', 's1']));
    } finally {
      await c.end();
    }
  });

  it('runs an IN list whose keys are on one shard there, and refuses one across shards (0A000) with nothing changed', async () => {
    const c = await connect(edge.rwPort);
    try {
      const sameShard = [1, 2, 3, 4, 5, 6].filter((k) => hashShard(k) === hashShard(1)).slice(0, 2);
      const other = [1, 2, 3, 4, 5, 6].find((k) => hashShard(k) !== hashShard(1)) as number;
      expect(sameShard).toHaveLength(2);
      const rows = (await c.query(`SELECT id FROM orders WHERE customer_id IN (${sameShard.join(', ')}) ORDER BY id`)).rows;
      expect(rows).toEqual(sameShard.map((id) => ({ id })));
      const extended = (await c.query('SELECT id FROM orders WHERE customer_id IN ($1, $2) ORDER BY id', sameShard)).rows;
      expect(extended).toEqual(sameShard.map((id) => ({ id })));
      const before = await snapshot();
      expect(await refusal(c, `DELETE FROM orders WHERE customer_id IN (1, ${other})`)).toMatchObject({ code: '0A000', detail: 'DBP_ERR_PGEDGE_SHARD_SPAN' });
      expect(await refusal(c, 'UPDATE orders SET note = $1 WHERE customer_id IN ($2, $3)', ['x', 1, other])).toMatchObject({ code: '0A000', detail: 'DBP_ERR_PGEDGE_SHARD_SPAN' });
      expect(await refusal(c, `SELECT id FROM orders WHERE customer_id IN (1, ${other})`)).toMatchObject({ code: '0A000' });
      expect(await refusal(c, `INSERT INTO orders (id, customer_id, note) VALUES (90, 1, 'a'), (91, ${other}, 'b')`)).toMatchObject({ code: '0A000' });
      expect(await snapshot()).toBe(before);
    } finally {
      await c.end();
    }
  });

  it('fails closed on every rule with the documented SQLSTATE, leaving every shard untouched', async () => {
    const c = await connect(edge.rwPort);
    try {
      const before = await snapshot();
      const failures: [string, unknown[] | undefined, string, string][] = [
        ['UPDATE orders SET note = \'lost\'', undefined, '0A000', 'DBP_ERR_SQL_SHARD_KEY_MISSING'],
        ['DELETE FROM orders WHERE note = $1', ['simple-1'], '0A000', 'DBP_ERR_SQL_SHARD_KEY_MISSING'],
        ['INSERT INTO orders (id, note) VALUES (95, \'no key\')', undefined, '0A000', 'DBP_ERR_SQL_SHARD_KEY_MISSING'],
        ['SELECT id FROM orders', undefined, '0A000', 'DBP_ERR_SQL_SHARD_KEY_MISSING'],
        ['UPDATE orders SET note = \'r\' WHERE customer_id > 0', undefined, '0A000', 'DBP_ERR_SQL_SHARD_MULTI'],
        ['UPDATE orders SET customer_id = 2 WHERE customer_id = 1', undefined, '428C9', 'DBP_ERR_SQL_SHARD_KEY_ASSIGNED'],
        ['UPDATE orders SET customer_id = $1 WHERE customer_id = $2', [2, 1], '428C9', 'DBP_ERR_SQL_SHARD_KEY_ASSIGNED'],
        ['UPDATE orders SET note = c.name FROM customers c WHERE c.name = orders.note AND orders.customer_id = 1', undefined, '0A000', 'DBP_ERR_SQL_SHARD_KEY_MISSING'],
        ['SELECT o.id FROM orders o JOIN customers c ON c.name = o.note WHERE o.customer_id = 1', undefined, '0A000', 'DBP_ERR_SQL_SHARD_KEY_MISSING'],
        ['INSERT INTO orders (id, customer_id, note) SELECT id + 100, customer_id, note FROM orders WHERE customer_id = 1', undefined, '0A000', 'DBP_ERR_SQL_SHARD_UNSUPPORTED'],
        ['ALTER TABLE orders ADD COLUMN extra int', undefined, '0A000', 'DBP_ERR_SQL_SHARD_UNSUPPORTED'],
        ['UPDATE orders SET note = \'n\' WHERE customer_id = $1', [null], '22023', 'DBP_ERR_SQL_SHARD_KEY_INVALID'],
      ];
      for (const [text, values, code, detail] of failures) {
        const got = await refusal(c, text, values);
        expect({ text, code: got.code, detail: got.detail }).toEqual({ text, code, detail });
      }
      // the session is usable after each refusal
      expect((await c.query('SELECT note FROM orders WHERE customer_id = 1')).rows).toEqual([{ note: 'simple-1' }]);
      expect(await snapshot()).toBe(before);
      expect(await edge.metric('dbproxy_pg_routing_failures_total', { reason: 'shard_key_missing' })).toBeGreaterThanOrEqual(6);
      expect(await edge.metric('dbproxy_pg_routing_failures_total', { reason: 'shard_key_assigned' })).toBeGreaterThanOrEqual(2);
    } finally {
      await c.end();
    }
  });

  it('pins a transaction to the shard of its first statement and refuses a statement on another shard (25001); ROLLBACK undoes it', async () => {
    const c = await connect(edge.rwPort);
    const onS1 = [21, 22, 23, 24, 25, 26, 27, 28].filter((k) => hashShard(k) === 's1');
    const onS0 = [21, 22, 23, 24, 25, 26, 27, 28].filter((k) => hashShard(k) === 's0');
    try {
      const before = await snapshot();
      await c.query('BEGIN');
      await c.query('INSERT INTO customers (id, name) VALUES ($1, $2)', [onS1[0], 'in-tx']);
      const cross = await refusal(c, 'INSERT INTO customers (id, name) VALUES ($1, $2)', [onS0[0], 'elsewhere']);
      expect(cross).toMatchObject({ code: '25001', detail: 'DBP_ERR_PGEDGE_SHARD_CROSS_TRANSACTION' });
      expect(cross.message).toContain('"s0"');
      // like PostgreSQL after an error: the transaction is aborted until ROLLBACK
      expect(await refusal(c, 'SELECT name FROM customers WHERE id = $1', [onS1[0]])).toMatchObject({ code: '25P02' });
      await c.query('ROLLBACK');
      expect(await snapshot()).toBe(before);

      // a transaction on the non-default shard commits there, statements with and without parameters
      await c.query('BEGIN');
      await c.query(`INSERT INTO customers (id, name) VALUES (${onS1[0]}, 'first')`);
      await c.query('UPDATE customers SET name = $1 WHERE id = $2', ['committed', onS1[0]]);
      await c.query(`INSERT INTO customers (id, name) VALUES (${onS1[1]}, 'second')`);
      expect((await c.query('SELECT count(*)::int AS n FROM customers WHERE id IN ($1, $2)', [onS1[0], onS1[1]])).rows).toEqual([{ n: 2 }]);
      await c.query('COMMIT');
      expect(await direct(s1.primary, `SELECT id, name FROM customers WHERE id IN (${onS1[0]}, ${onS1[1]}) ORDER BY id`)).toEqual([
        { id: String(onS1[0]), name: 'committed' },
        { id: String(onS1[1]), name: 'second' },
      ]);
      expect(await direct(s0.primary, `SELECT id FROM customers WHERE id IN (${onS1[0]}, ${onS1[1]})`)).toEqual([]);

      // BEGIN then COMMIT with nothing in between, and a refused first statement
      await c.query('BEGIN');
      await c.query('COMMIT');
      await c.query('BEGIN');
      expect(await refusal(c, 'DELETE FROM customers')).toMatchObject({ code: '0A000' });
      expect(await refusal(c, 'SELECT 1')).toMatchObject({ code: '25P02' });
      await c.query('ROLLBACK');
      expect((await c.query('SELECT name FROM customers WHERE id = $1', [onS1[0]])).rows).toEqual([{ name: 'committed' }]);
    } finally {
      await c.end();
    }
  });

  it('sends a keyless statement to the shard a dbproxy_shard comment names', async () => {
    const c = await connect(edge.rwPort);
    try {
      const res = await c.query("/*dbproxy_shard='s1'*/ SELECT count(*)::int AS n FROM orders");
      expect(res.rows).toEqual([{ n: (await direct(s1.primary, 'SELECT id FROM orders')).length }]);
      expect(await refusal(c, "/*dbproxy_shard='s9'*/ SELECT count(*) FROM orders")).toMatchObject({ code: '22023', detail: 'DBP_ERR_SQL_SHARD_HINT_UNKNOWN' });
    } finally {
      await c.end();
    }
  });

  it('checks users.shards per statement (42501), leaving the other shard untouched', async () => {
    const c = await connect(edge.rwPort, 's0only', 's0-secret');
    const onS1 = [31, 32, 33, 34, 35, 36].find((k) => hashShard(k) === 's1') as number;
    const onS0 = [31, 32, 33, 34, 35, 36].find((k) => hashShard(k) === 's0') as number;
    try {
      await c.query('INSERT INTO customers (id, name) VALUES ($1, $2)', [onS0, 'allowed']);
      expect(await direct(s0.primary, `SELECT name FROM customers WHERE id = ${onS0}`)).toEqual([{ name: 'allowed' }]);
      expect(await refusal(c, 'INSERT INTO customers (id, name) VALUES ($1, $2)', [onS1, 'forbidden'])).toMatchObject({ code: '42501', detail: 'DBP_ERR_PGEDGE_SHARD_FORBIDDEN' });
      expect(await direct(s1.primary, `SELECT name FROM customers WHERE id = ${onS1}`)).toEqual([]);
    } finally {
      await c.end();
    }
  });

  it('reads keyed rows of s0 on its replica and counts units by shard', async () => {
    await s0.waitForReplicaCatchUp();
    const c = await connect(edge.rwPort);
    const onS0 = [1, 2, 3, 4, 5, 6].find((k) => hashShard(k) === 's0') as number;
    try {
      const replicaBefore = await edge.metric('dbproxy_pg_query_routes_total', { route: 'replica' });
      const s0Before = await edge.metric('dbproxy_pg_shard_units_total', { shard: 's0' });
      expect((await c.query('SELECT note FROM orders WHERE customer_id = $1', [onS0])).rows).toEqual([{ note: `simple-${onS0}` }]);
      expect(await edge.metric('dbproxy_pg_query_routes_total', { route: 'replica' })).toBe(replicaBefore + 1);
      expect(await edge.metric('dbproxy_pg_shard_units_total', { shard: 's0' })).toBe(s0Before + 1);
    } finally {
      await c.end();
    }
    const report = (await (await fetch(`${edge.admin}/postgres/backends`)).json()) as { shards: Record<string, { primary: string[]; replicas: string[] }> };
    expect(report.shards).toEqual({ s0: { primary: ['s0-primary'], replicas: ['s0-replica'] }, s1: { primary: ['s1-primary'], replicas: [] } });
  });
});

describe('multi_shard = "all_shards"', () => {
  let wide: EdgeHarness;

  beforeAll(async () => {
    wide = await startEdge(backends(), `${POSTGRES}\nquery_timeout_seconds = 2\n${RULES.replace('MULTI', 'multi_shard = "all_shards"')}`, USERS);
  });

  afterAll(async () => {
    await wide?.stop();
  });

  it('runs a keyless read on every shard: one RowDescription, every row, one CommandComplete with the summed count', async () => {
    const c = await connect(wide.rwPort);
    try {
      const all = [...(await direct<{ id: number }>(s0.primary, 'SELECT id FROM orders')), ...(await direct<{ id: number }>(s1.primary, 'SELECT id FROM orders'))];
      expect(all.length).toBeGreaterThan(4);
      await s0.waitForReplicaCatchUp();
      const res = await c.query('SELECT id, note FROM orders');
      expect(res.command).toBe('SELECT');
      expect(res.rowCount).toBe(all.length);
      expect(res.fields.map((f) => f.name)).toEqual(['id', 'note']);
      expect(res.rows.map((r: { id: number }) => r.id).sort((a, b) => a - b)).toEqual(all.map((r) => r.id).sort((a, b) => a - b));
      const ranged = await c.query('SELECT id FROM orders WHERE customer_id > 2');
      const expected = all.length - (await Promise.all([s0.primary, s1.primary].map((s) => direct(s, 'SELECT id FROM orders WHERE customer_id <= 2')))).flat().length;
      expect(ranged.rowCount).toBe(expected);
      // a keyed statement still goes to its one shard
      expect((await c.query('SELECT note FROM orders WHERE customer_id = 1')).rows).toEqual([{ note: 'simple-1' }]);
      // the extended protocol: parameters bound on every shard, a named statement executed twice
      const extended = await c.query('SELECT id FROM orders WHERE customer_id > $1', [2]);
      expect(extended.rowCount).toBe(expected);
      expect(extended.fields.map((f) => f.name)).toEqual(['id']);
      for (let i = 0; i < 2; i++) {
        const named = await c.query({ name: 'every-shard', text: 'SELECT id, note FROM orders WHERE note <> $1', values: ['none'] });
        expect(named.rows.map((r: { id: number }) => r.id).sort((a, b) => a - b)).toEqual(all.map((r) => r.id).sort((a, b) => a - b));
      }
      const other = [2, 3, 4, 5, 6].find((k) => hashShard(k) !== hashShard(1)) as number;
      const across = await c.query('SELECT note FROM orders WHERE customer_id IN ($1, $2)', [1, other]);
      expect(across.rows.map((r: { note: string }) => r.note).sort()).toEqual([`simple-1`, `simple-${other}`].sort());
      // a shard's error is the answer, and the session goes on
      expect(await refusal(c, 'SELECT missing_column FROM orders')).toMatchObject({ code: '42703' });
      expect((await c.query('SELECT note FROM orders WHERE customer_id = $1', [1])).rows).toEqual([{ note: 'simple-1' }]);
    } finally {
      await c.end();
    }
  });

  it('bounds a read on every shard by query_timeout_seconds (57014, the shard cancelled) and goes on', async () => {
    const c = await connect(wide.rwPort);
    try {
      expect(await refusal(c, 'SELECT id FROM orders WHERE customer_id > 0 AND pg_sleep(5) IS NOT NULL')).toMatchObject({ code: '57014', detail: 'DBP_ERR_PGEDGE_QUERY_TIMEOUT' });
      expect((await c.query('SELECT note FROM orders WHERE customer_id = 1')).rows).toEqual([{ note: 'simple-1' }]);
      const sleeping = await Promise.all([s0.primary, s0.replicas[0], s1.primary].map((s) => direct(s, "SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_sleep(5)%' AND pid <> pg_backend_pid()")));
      expect(sleeping.flat()).toEqual([]);
    } finally {
      await c.end();
    }
  });

  it('refuses what concatenation cannot answer (ORDER BY, LIMIT, GROUP BY, aggregates, DISTINCT) and writes on every shard', async () => {
    const c = await connect(wide.rwPort);
    try {
      const before = await snapshot();
      for (const text of [
        'SELECT id FROM orders ORDER BY id',
        'SELECT id FROM orders LIMIT 2',
        'SELECT note, count(*) FROM orders GROUP BY note',
        'SELECT count(*) FROM orders',
        'SELECT DISTINCT note FROM orders',
      ]) {
        expect({ text, ...(await refusal(c, text)) }).toMatchObject({ text, code: '0A000', detail: 'DBP_ERR_PGEDGE_SHARD_MERGE' });
      }
      expect(await refusal(c, "UPDATE orders SET note = 'all' WHERE customer_id > 0")).toMatchObject({ code: '0A000', detail: 'DBP_ERR_PGEDGE_SHARD_SPAN' });
      expect(await refusal(c, "DELETE FROM orders WHERE note = 'x'")).toMatchObject({ code: '0A000', detail: 'DBP_ERR_SQL_SHARD_KEY_MISSING' });
      await c.query('BEGIN');
      await c.query('SELECT note FROM orders WHERE customer_id = 1');
      expect(await refusal(c, 'SELECT id FROM orders')).toMatchObject({ code: '0A000', detail: 'DBP_ERR_PGEDGE_SHARD_SPAN' });
      await c.query('ROLLBACK');
      await c.query('BEGIN');
      expect(await refusal(c, 'SELECT id FROM orders')).toMatchObject({ code: '0A000', detail: 'DBP_ERR_PGEDGE_SHARD_SPAN' });
      await c.query('ROLLBACK');
      expect(await snapshot()).toBe(before);
    } finally {
      await c.end();
    }
  });
});
