// Sharding through mysql-edge on two real shards, each a MariaDB primary with a GTID replica:
// statements routed by literal and parameter keys (hash over integers and strings, signed ranges,
// value maps), rows checked on each shard directly, every fail-closed rule (client sees the
// documented ERR, no shard's data changes), keyless reads concatenated across shards, transactions
// pinned to their first statement's shard, users.shards, the mariadb CLI, and GET /mysql/backends.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createShardMap } from '@dbproxy/routing';
import { startMariaDb, type MariaDbServer, type ReplicatedServers } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

const run = promisify(execFile);
jest.setTimeout(180_000);

type Shard = 's0' | 's1';
const SHARDS: readonly Shard[] = ['s0', 's1'];
const hash = createShardMap({ kind: 'hash', shards: ['s0', 's1'] });
const range = createShardMap({ kind: 'range', ranges: [{ to: 0n, shard: 's0' }, { from: 0n, shard: 's1' }] });

const SHARDING = `read_after_write_seconds = 3
pool_max_per_backend = 16
[mysql.sharding]
enabled = true
default_shard = "s0"
multi_shard = "all_shards"
[[mysql.sharding.rules]]
table = "orders"
column = "customer_id"
map = { kind = "hash", shards = ["s0", "s1"] }
[[mysql.sharding.rules]]
table = "members"
column = "email"
map = { kind = "hash", shards = ["s0", "s1"] }
[[mysql.sharding.rules]]
table = "events"
column = "k"
map = { kind = "range", ranges = [{ to = 0, shard = "s0" }, { from = 0, shard = "s1" }] }
[[mysql.sharding.rules]]
table = "sbtest1"
column = "id"
map = { kind = "hash", shards = ["s0", "s1"] }
[[mysql.sharding.rules]]
table = "accounts"
column = "region"
map = { kind = "value", values = { eu = "s0", us = "s1" } }
`;

const SCHEMA = [
  'CREATE DATABASE shop',
  'CREATE TABLE shop.orders (id INT PRIMARY KEY, customer_id INT NOT NULL, note VARCHAR(40))',
  'CREATE TABLE shop.members (email VARCHAR(80) PRIMARY KEY, name VARCHAR(40))',
  'CREATE TABLE shop.events (id INT PRIMARY KEY, k BIGINT NOT NULL)',
  'CREATE TABLE shop.accounts (id INT PRIMARY KEY, region VARCHAR(10) NOT NULL)',
  'CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(40))',
  "CREATE TABLE shop.sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))",
];
const SBTEST_ROWS = 2000;

let servers: Record<Shard, ReplicatedServers<MariaDbServer>>;
let direct: Record<Shard, Connection>;
let edge: EdgeHarness;
let client: Connection;

const connectRoot = (server: MariaDbServer) => createConnection({ host: server.host, port: server.port, user: 'root', database: 'shop' });

/** Rows of a query run on one shard's primary directly (behind the edge's back). */
async function on(shard: Shard, sql: string): Promise<RowDataPacket[]> {
  const [rows] = await direct[shard].query<RowDataPacket[]>(sql);
  return rows;
}

/** Every shard's rows of a table, to show that a refused statement changed nothing anywhere. */
async function everywhere(table: string): Promise<Record<Shard, RowDataPacket[]>> {
  return { s0: await on('s0', `SELECT * FROM ${table} ORDER BY 1`), s1: await on('s1', `SELECT * FROM ${table} ORDER BY 1`) };
}

/** The ERR a statement gets through the edge (mysql2 `query`), with the data on every shard before and after. */
async function refused(sql: string, table = 'orders', c: Connection = client): Promise<{ errno: number; sqlState: string; message: string }> {
  const before = await everywhere(table);
  const err = (await c.query(sql).then(
    () => null,
    (e: unknown) => e,
  )) as { errno: number; sqlState: string; message: string } | null;
  if (err === null) throw new Error(`not refused: ${sql}`);
  expect(await everywhere(table)).toEqual(before);
  return { errno: err.errno, sqlState: err.sqlState, message: err.message };
}

beforeAll(async () => {
  const [a, b] = await Promise.all([startMariaDb({ replicas: 1 }), startMariaDb({ replicas: 1, serverIdBase: 11 })]);
  servers = { s0: a, s1: b };
  for (const shard of SHARDS) {
    const c = await createConnection({ host: servers[shard].primary.host, port: servers[shard].primary.port, user: 'root' });
    for (const sql of SCHEMA) await c.query(sql);
    await c.end();
    await servers[shard].waitForReplicaCatchUp();
  }
  direct = { s0: await connectRoot(a.primary), s1: await connectRoot(b.primary) };
  const backends = SHARDS.flatMap((shard) => [
    { name: `${shard}-primary`, host: servers[shard].primary.host, port: servers[shard].primary.port, role: 'primary' as const, shard, extra: 'reserved_pool = 2' },
    { name: `${shard}-replica`, host: servers[shard].replicas[0]!.host, port: servers[shard].replicas[0]!.port, role: 'replica' as const, shard },
  ]);
  edge = await startEdge(backends, SHARDING, '[[users]]\nname = "s1only"\npassword = "s1-secret"\nshards = ["s1"]\n');
  client = await edge.connect({ database: 'shop' });
});

afterAll(async () => {
  await client?.end();
  for (const c of Object.values(direct ?? {})) await c.end();
  await edge?.stop();
  await Promise.all(Object.values(servers ?? {}).map((s) => s.destroy()));
});

describe('statements routed by shard key', () => {
  it('puts rows of a hash-sharded table on the shard the map says (INSERT, one shard per statement)', async () => {
    for (const customer of [1, 2, 3, 4, 5]) await client.query(`INSERT INTO orders (id, customer_id, note) VALUES (${customer * 10}, ${customer}, 'n${customer}')`);
    // several rows whose keys share a shard: one statement
    await client.query("INSERT INTO orders (id, customer_id, note) VALUES (70, 7, 'a'), (90, 9, 'b')");
    for (const shard of SHARDS) {
      const ids = (await on(shard, 'SELECT customer_id FROM orders ORDER BY customer_id')).map((r) => r['customer_id'] as number);
      expect(ids).toEqual([1, 2, 3, 4, 5, 7, 9].filter((k) => hash.shardFor(k) === shard));
      expect(ids.length).toBeGreaterThan(0);
    }
  });

  it('reads, updates and deletes by key on that shard (query and execute)', async () => {
    const [q] = await client.query<RowDataPacket[]>('SELECT id, note FROM orders WHERE customer_id = 3');
    expect(q).toEqual([{ id: 30, note: 'n3' }]);
    const [e] = await client.execute<RowDataPacket[]>('SELECT id, note FROM orders WHERE customer_id = ?', [4]);
    expect(e).toEqual([{ id: 40, note: 'n4' }]);
    await client.query("UPDATE orders SET note = 'upd' WHERE customer_id = 5");
    await client.execute('DELETE FROM orders WHERE customer_id = ?', [4]);
    expect(await on(hash.shardFor(5) as Shard, 'SELECT note FROM orders WHERE customer_id = 5')).toEqual([{ note: 'upd' }]);
    expect(await on(hash.shardFor(4) as Shard, 'SELECT id FROM orders WHERE customer_id = 4')).toEqual([]);
  });

  it('sends an IN list whose keys share a shard there, and refuses one spread over shards', async () => {
    const [rows] = await client.query<RowDataPacket[]>('SELECT customer_id FROM orders WHERE customer_id IN (1, 3) ORDER BY customer_id');
    expect(rows).toEqual([{ customer_id: 1 }, { customer_id: 3 }]);
    const err = await refused("UPDATE orders SET note = 'x' WHERE customer_id IN (1, 2)");
    expect(err).toMatchObject({ errno: 1235, sqlState: '42000' });
    expect(err.message).toContain('sharded table orders has keys on several shards (s1, s0)');
    const insert = await refused("INSERT INTO orders (id, customer_id, note) VALUES (100, 1, 'a'), (200, 2, 'b')");
    expect(insert.message).toContain('several shards');
  });

  it('runs a prepared statement whose parameter is the key on the shard of each execution (prepared lazily there)', async () => {
    const c = await edge.connect({ database: 'shop' });
    for (const customer of [11, 12]) await c.execute('INSERT INTO orders (id, customer_id, note) VALUES (?, ?, ?)', [customer * 10, customer, `p${customer}`]);
    expect(await on(hash.shardFor(11) as Shard, 'SELECT note FROM orders WHERE customer_id = 11')).toEqual([{ note: 'p11' }]);
    expect(await on(hash.shardFor(12) as Shard, 'SELECT note FROM orders WHERE customer_id = 12')).toEqual([{ note: 'p12' }]);
    for (const customer of [11, 12]) {
      const [rows] = await c.execute<RowDataPacket[]>('SELECT note FROM orders WHERE customer_id = ?', [customer]);
      expect(rows).toEqual([{ note: `p${customer}` }]);
    }
    // a string parameter that is an integer key is the same key as the integer
    const [same] = await c.execute<RowDataPacket[]>('SELECT note FROM orders WHERE customer_id = ?', ['11']);
    expect(same).toEqual([{ note: 'p11' }]);
    await c.end();
  });

  it('routes an execute by its key parameter wherever it stands among the others (only those routing reads are decoded)', async () => {
    const c = await edge.connect({ database: 'shop' });
    for (const customer of [61, 62]) await c.execute('INSERT INTO orders (id, customer_id, note) VALUES (?, ?, ?)', [customer * 10, customer, 'new']);
    for (const customer of [61, 62]) {
      // the key after a string parameter, then the key before one (left undecoded by the edge)
      await c.execute('UPDATE orders SET note = ? WHERE customer_id = ?', [`u${customer}`.padEnd(40, 'x'), customer]);
      const [rows] = await c.execute<RowDataPacket[]>('SELECT note FROM orders WHERE customer_id = ? AND note LIKE ?', [customer, `u${customer}%`]);
      expect(rows).toEqual([{ note: `u${customer}`.padEnd(40, 'x') }]);
    }
    for (const customer of [61, 62]) {
      const shard = hash.shardFor(customer) as Shard;
      expect(await on(shard, `SELECT note FROM orders WHERE customer_id = ${customer}`)).toEqual([{ note: `u${customer}`.padEnd(40, 'x') }]);
      expect(await on(shard === 's0' ? 's1' : 's0', `SELECT note FROM orders WHERE customer_id = ${customer}`)).toEqual([]);
    }
    await c.end();
  });

  it('routes string keys by FNV-1a hash', async () => {
    const emails = ['ann@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com', 'eve@example.com'];
    for (const email of emails) await client.execute('INSERT INTO members (email, name) VALUES (?, ?)', [email, email.split('@')[0]]);
    for (const shard of SHARDS) {
      const found = (await on(shard, 'SELECT email FROM members ORDER BY email')).map((r) => r['email'] as string);
      expect(found).toEqual(emails.filter((e) => hash.shardFor(e) === shard));
    }
    expect(new Set(emails.map((e) => hash.shardFor(e))).size).toBe(2);
    const [rows] = await client.query<RowDataPacket[]>("SELECT name FROM members WHERE email = 'cy@example.com'");
    expect(rows).toEqual([{ name: 'cy' }]);
  });

  it('routes signed range keys, negative ones included, by half-open ranges', async () => {
    for (const [id, k] of [[1, -5], [2, -1], [3, 0], [4, 7], [5, -9000000000]] as const) await client.query(`INSERT INTO events (id, k) VALUES (${id}, ${k})`);
    expect((await on('s0', 'SELECT k FROM events ORDER BY id')).map((r) => Number(r['k']))).toEqual([-5, -1, -9000000000]);
    expect((await on('s1', 'SELECT k FROM events ORDER BY id')).map((r) => Number(r['k']))).toEqual([0, 7]);
    expect(range.shardFor(-1)).toBe('s0');
    const [rows] = await client.execute<RowDataPacket[]>('SELECT id FROM events WHERE k = ?', [-5]);
    expect(rows).toEqual([{ id: 1 }]);
  });

  it('routes value-map keys and refuses an unmapped value', async () => {
    await client.query("INSERT INTO accounts (id, region) VALUES (1, 'eu')");
    await client.query("INSERT INTO accounts (id, region) VALUES (2, 'us')");
    expect(await on('s0', 'SELECT id FROM accounts')).toEqual([{ id: 1 }]);
    expect(await on('s1', 'SELECT id FROM accounts')).toEqual([{ id: 2 }]);
    const err = await refused("INSERT INTO accounts (id, region) VALUES (3, 'apac')", 'accounts');
    expect(err).toMatchObject({ errno: 1235, sqlState: '42000' });
    expect(err.message).toContain('shard key apac of table accounts maps to no shard');
  });

  it('keeps the read-after-write window per shard', async () => {
    const c = await edge.connect({ database: 'shop' });
    const [one, other] = [hash.shardFor(1) as Shard, hash.shardFor(2) as Shard];
    expect(one).not.toBe(other);
    await Promise.all(SHARDS.map((shard) => servers[shard].waitForReplicaCatchUp()));
    const count = (route: string, backend: string) => edge.metric('dbproxy_mysql_queries_total', { route, backend });
    const before = { raw: await count('read_after_write', `${one}-primary`), replica: await count('replica', `${other}-replica`) };
    await c.query("UPDATE orders SET note = 'n1' WHERE customer_id = 1");
    const [mine] = await c.query<RowDataPacket[]>('SELECT note FROM orders WHERE customer_id = 1');
    expect(mine).toEqual([{ note: 'n1' }]);
    await c.query('SELECT note FROM orders WHERE customer_id = 2');
    expect(await count('read_after_write', `${one}-primary`)).toBe(before.raw + 1);
    expect(await count('replica', `${other}-replica`)).toBe(before.replica + 1);
    await c.end();
  });

  it('routes the mariadb CLI statements by key', async () => {
    const sql = "INSERT INTO orders (id, customer_id, note) VALUES (3100, 31, 'cli'); INSERT INTO orders (id, customer_id, note) VALUES (3200, 32, 'cli'); SELECT note FROM orders WHERE customer_id = 31";
    const args = ['--ssl=0', '-h127.0.0.1', `-P${edge.rwPort}`, '-uapp', '-papp-secret', '--batch', '--skip-column-names', 'shop', '-e', sql];
    const { stdout } = await run('mariadb', args, { timeout: 20_000 });
    expect(stdout.trim()).toBe('cli');
    expect(await on(hash.shardFor(31) as Shard, 'SELECT id FROM orders WHERE note = "cli"')).toEqual([{ id: 3100 }]);
    expect(await on(hash.shardFor(32) as Shard, 'SELECT id FROM orders WHERE note = "cli"')).toEqual([{ id: 3200 }]);
  });

  it('sends statements on unsharded tables to the default shard', async () => {
    await client.query("INSERT INTO items VALUES (1, 'widget')");
    expect(await on('s0', 'SELECT name FROM items')).toEqual([{ name: 'widget' }]);
    expect(await on('s1', 'SELECT name FROM items')).toEqual([]);
  });
});

describe('fail closed', () => {
  it('refuses a write without a usable key, naming the table and the column', async () => {
    for (const sql of ["UPDATE orders SET note = 'all'", "DELETE FROM orders WHERE note = 'n1'", "INSERT INTO orders (id, note) VALUES (500, 'no key')"]) {
      const err = await refused(sql);
      expect(err).toMatchObject({ errno: 1235, sqlState: '42000' });
      expect(err.message).toContain('sharded table orders has no value for shard column customer_id');
    }
  });

  it('refuses an assignment to the shard key column', async () => {
    const err = await refused('UPDATE orders SET customer_id = 2 WHERE customer_id = 1');
    expect(err).toMatchObject({ errno: 1235, sqlState: '42000' });
    expect(err.message).toContain('assigns shard column customer_id of sharded table orders');
  });

  it('refuses a join of sharded tables that is not on one shard', async () => {
    const err = await refused('SELECT o.id FROM orders o JOIN members m ON m.name = o.note WHERE o.customer_id = 1');
    expect(err).toMatchObject({ errno: 1235, sqlState: '42000' });
    expect(err.message).toContain('Join of sharded tables orders, members is not on one shard');
  });

  it('refuses statement families the extractor does not route (INSERT ... SELECT, DDL)', async () => {
    const select = await refused('INSERT INTO orders (id, customer_id, note) SELECT id + 1000, customer_id, note FROM orders WHERE customer_id = 1');
    expect(select.message).toContain('INSERT ... SELECT into sharded table orders');
    const ddl = await refused('ALTER TABLE orders ADD COLUMN extra INT');
    expect(ddl).toMatchObject({ errno: 1235, sqlState: '42000' });
    expect(ddl.message).toContain('DDL on a sharded table');
    expect(await on('s1', "SHOW COLUMNS FROM orders LIKE 'extra'")).toEqual([]);
  });

  it('counts refusals by reason', async () => {
    const reason = (r: string) => edge.metric('dbproxy_mysql_shard_refusals_total', { reason: r });
    const before = await reason('no_key');
    await refused("DELETE FROM orders WHERE note = 'zzz'");
    expect(await reason('no_key')).toBe(before + 1);
    expect(await reason('several_shards')).toBeGreaterThan(0);
    expect(await reason('key_assigned')).toBeGreaterThan(0);
    expect(await reason('join')).toBeGreaterThan(0);
  });
});

describe('multi_shard = "all_shards"', () => {
  it('runs a keyless read on every shard and returns one result set of all rows (query and execute)', async () => {
    const [rows] = await client.query<RowDataPacket[]>("SELECT id, customer_id FROM orders WHERE note LIKE 'n%'");
    const expected = [...(await on('s0', "SELECT id, customer_id FROM orders WHERE note LIKE 'n%'")), ...(await on('s1', "SELECT id, customer_id FROM orders WHERE note LIKE 'n%'"))];
    expect(expected.length).toBeGreaterThan(2);
    expect(rows).toEqual(expected);
    // the binary protocol: the statement is prepared on each shard's connection, rows concatenated
    const [executed] = await client.execute<RowDataPacket[]>('SELECT id, customer_id FROM orders WHERE note LIKE ?', ['n%']);
    expect(executed).toEqual(expected);
    const [again] = await client.execute<RowDataPacket[]>('SELECT id, customer_id FROM orders WHERE note LIKE ?', ['n%']);
    expect(again).toEqual(expected);
    // the session goes on normally after the merged response
    const [[one]] = await client.query<RowDataPacket[]>('SELECT 1 AS one');
    expect(one).toEqual({ one: 1 });
  });

  it('concatenates across shards for the mariadb CLI too', async () => {
    const args = ['--ssl=0', '-h127.0.0.1', `-P${edge.rwPort}`, '-uapp', '-papp-secret', '--batch', '--skip-column-names', 'shop', '-e', 'SELECT email FROM members'];
    const { stdout } = await run('mariadb', args, { timeout: 20_000 });
    expect(stdout.trim().split('\n').sort()).toEqual(['ann@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com', 'eve@example.com']);
  });

  it('runs a read whose key is a range on every shard, and refuses a write with one', async () => {
    const [rows] = await client.query<RowDataPacket[]>('SELECT customer_id FROM orders WHERE customer_id > 6 AND customer_id < 10');
    expect(rows.map((r) => r['customer_id'] as number).sort()).toEqual([7, 9]);
    const err = await refused("UPDATE orders SET note = 'r' WHERE customer_id > 6");
    expect(err.message).toContain('sharded table orders has keys on several shards');
  });

  it('refuses ORDER BY, LIMIT, GROUP BY, aggregates and DISTINCT across shards', async () => {
    for (const [sql, what] of [
      ['SELECT id FROM orders ORDER BY id', 'ORDER BY'],
      ['SELECT id FROM orders LIMIT 2', 'LIMIT'],
      ['SELECT note FROM orders GROUP BY note', 'GROUP BY'],
      ['SELECT COUNT(*) FROM orders', 'an aggregate'],
      ['SELECT DISTINCT note FROM orders', 'DISTINCT'],
    ] as const) {
      const err = await refused(sql);
      expect(err).toMatchObject({ errno: 1235, sqlState: '42000' });
      expect(err.message).toContain(`runs on every shard, which cannot merge ${what}`);
    }
  });
});

describe('transactions and sessions', () => {
  it('pins a transaction to the shard of its first statement and refuses a statement on another shard', async () => {
    const c = await edge.connect({ database: 'shop' });
    await c.query('BEGIN');
    await c.query("INSERT INTO orders (id, customer_id, note) VALUES (1001, 21, 'tx')");
    const other = 22; // hash: the other shard
    expect(hash.shardFor(other)).not.toBe(hash.shardFor(21));
    const err = await refused(`INSERT INTO orders (id, customer_id, note) VALUES (1002, ${other}, 'tx')`, 'orders', c);
    expect(err).toMatchObject({ errno: 1235, sqlState: '42000' });
    expect(err.message).toContain(`Statement routes to shard ${hash.shardFor(other)} but this transaction (or pinned session) runs on shard ${hash.shardFor(21)}`);
    // the transaction's own shard still answers inside it, and the client can roll back
    const [inside] = await c.query<RowDataPacket[]>('SELECT note FROM orders WHERE customer_id = 21');
    expect(inside).toEqual([{ note: 'tx' }]);
    await c.query('ROLLBACK');
    expect(await on('s0', 'SELECT id FROM orders WHERE id IN (1001, 1002)')).toEqual([]);
    expect(await on('s1', 'SELECT id FROM orders WHERE id IN (1001, 1002)')).toEqual([]);
    // a committed transaction lands on its shard only
    await c.query('START TRANSACTION');
    await c.execute('INSERT INTO orders (id, customer_id, note) VALUES (?, ?, ?)', [1003, other, 'committed']);
    await c.query('COMMIT');
    expect(await on(hash.shardFor(other) as Shard, 'SELECT note FROM orders WHERE id = 1003')).toEqual([{ note: 'committed' }]);
    expect(await on(hash.shardFor(21) as Shard, 'SELECT note FROM orders WHERE id = 1003')).toEqual([]);
    await c.end();
  });

  it('keeps a session pin on its shard', async () => {
    const c = await edge.connect({ database: 'shop' });
    const onDefault = [1, 2].find((k) => hash.shardFor(k) === 's0') as number;
    const elsewhere = [1, 2].find((k) => hash.shardFor(k) === 's1') as number;
    await c.query('SET @mark = 1'); // session state: pinned on the default shard s0
    const [rows] = await c.query<RowDataPacket[]>(`SELECT @mark AS mark, customer_id FROM orders WHERE customer_id = ${onDefault}`);
    expect(rows).toEqual([{ mark: 1, customer_id: onDefault }]);
    const err = await refused(`UPDATE orders SET note = 'p' WHERE customer_id = ${elsewhere}`, 'orders', c);
    expect(err.message).toContain('Statement routes to shard s1 but this transaction (or pinned session) runs on shard s0');
    await c.end();
  });

  it('limits a user to users.shards with 1044', async () => {
    const c = await edge.connect({ user: 's1only', password: 's1-secret', database: 'shop' });
    const mine = [1, 2].find((k) => hash.shardFor(k) === 's1') as number;
    const theirs = [1, 2].find((k) => hash.shardFor(k) === 's0') as number;
    const [rows] = await c.query<RowDataPacket[]>(`SELECT customer_id FROM orders WHERE customer_id = ${mine}`);
    expect(rows).toEqual([{ customer_id: mine }]);
    const err = await refused(`DELETE FROM orders WHERE customer_id = ${theirs}`, 'orders', c);
    expect(err).toEqual({ errno: 1044, sqlState: '42000', message: "Access denied for user 's1only' to shard 's0' (users.shards)" });
    // unsharded tables live on the default shard (s0): out of reach too; a read of no table is not
    expect((await refused('SELECT name FROM items', 'items', c)).errno).toBe(1044);
    const [[one]] = await c.query<RowDataPacket[]>('SELECT 1 AS one');
    expect(one).toEqual({ one: 1 });
    await c.end();
  });
});

describe('sysbench', () => {
  it('runs oltp_point_select over the sharded sbtest1 with 0 errors, reads on both shards', async () => {
    for (const shard of SHARDS) {
      const ids = Array.from({ length: SBTEST_ROWS }, (_, i) => i + 1).filter((id) => hash.shardFor(id) === shard);
      await direct[shard].query(`INSERT INTO sbtest1 (id, k, c, pad) VALUES ${ids.map((id) => `(${id}, ${id % 97}, 'c-${id}', 'pad')`).join(', ')}`);
      await servers[shard].waitForReplicaCatchUp();
    }
    const reads = (shard: Shard) => edge.metric('dbproxy_mysql_queries_total', { shard, route: 'replica' });
    const before = { s0: await reads('s0'), s1: await reads('s1') };
    const args = ['oltp_point_select', '--db-driver=mysql', '--mysql-host=127.0.0.1', `--mysql-port=${edge.rwPort}`, '--mysql-user=app', '--mysql-password=app-secret', '--mysql-db=shop', '--tables=1', `--table-size=${SBTEST_ROWS}`, '--threads=4', '--time=3', 'run'];
    const { stdout } = await run('sysbench', args, { timeout: 60_000 });
    const queries = Number(/queries:\s+(\d+)/.exec(stdout)?.[1]);
    expect(Number(/ignored errors:\s+(\d+)/.exec(stdout)?.[1])).toBe(0);
    expect(queries).toBeGreaterThan(100);
    expect((await reads('s0')) - before.s0).toBeGreaterThan(queries / 4);
    expect((await reads('s1')) - before.s1).toBeGreaterThan(queries / 4);
  });
});

describe('operations', () => {
  it('groups GET /mysql/backends by shard and labels metrics with the shard', async () => {
    const report = (await (await fetch(`${edge.admin}/mysql/backends`)).json()) as { shards: Record<string, unknown> };
    expect(report.shards).toEqual({
      s0: { primary: 's0-primary', replicas: ['s0-replica'], healthy: true },
      s1: { primary: 's1-primary', replicas: ['s1-replica'], healthy: true },
    });
    expect(await edge.metric('dbproxy_mysql_queries_total', { backend: 's1-primary', shard: 's1' })).toBeGreaterThan(0);
    expect(await edge.metric('dbproxy_mysql_queries_total', { backend: 's0-primary', shard: 's0' })).toBeGreaterThan(0);
  });
});
