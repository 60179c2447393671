// [mysql.cache] against a real MariaDB and a private Redis, through mysql2: a hit is answered
// without the backend (a row changed behind the proxy's back still reads as cached), writes through
// the edge invalidate before their OK, a transaction's writes are bumped again at COMMIT,
// nondeterministic or transactional SELECTs are never cached, a stopped Redis leaves reads working
// uncached, GET /mysql/cache shows fingerprints only; then a checker with writers and readers on two
// edges sharing the Redis: every read started after a write's OK returns that write or a later one.
import { startMariaDb, startRedis, waitFor } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(240_000);

type Db = Awaited<ReturnType<typeof startMariaDb>>;
type Redis = Awaited<ReturnType<typeof startRedis>>;
let db: Db;
let redis: Redis;
let direct: Connection;
let edge: EdgeHarness;
let client: Connection;

const SETUP = [
  'CREATE DATABASE cdb',
  'CREATE TABLE cdb.items (id INT PRIMARY KEY, v VARCHAR(40))',
  'CREATE TABLE cdb.plain (id INT PRIMARY KEY, v VARCHAR(40))',
  'CREATE TABLE cdb.counters (id INT PRIMARY KEY, n BIGINT NOT NULL)',
  "INSERT INTO cdb.items VALUES (1, 'a'), (2, 'b'), (3, 'c')",
  "INSERT INTO cdb.plain VALUES (1, 'p')",
  'INSERT INTO cdb.counters VALUES (1, 0), (2, 0), (3, 0), (4, 0)',
];

const cacheToml = (port: number) => ({
  mysql: `[mysql.cache]\nenabled = true\nredis_backend = "cache"\nttl_seconds = 60\nmax_entry_bytes = 4096\ntables = ["cdb.items", "cdb.counters"]\n`,
  extra: `[[redis_backends]]\nname = "cache"\naddress = "127.0.0.1:${port}"\nrole = "primary"\n`,
});

async function read(c: Connection, sql: string, params: unknown[] = []): Promise<string[]> {
  const [rows] = await c.query<RowDataPacket[]>(sql, params);
  return rows.map((r) => String(Object.values(r)[0]));
}

const metric = (name: string, labels?: Record<string, string>) => edge.metric(`dbproxy_mysql_cache_${name}`, labels);

beforeAll(async () => {
  [db, redis] = await Promise.all([startMariaDb({ replicas: 0 }), startRedis()]);
  direct = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  for (const sql of SETUP) await direct.query(sql);
  const toml = cacheToml(redis.primary.port);
  edge = await startEdge([{ name: 'db', host: db.primary.host, port: db.primary.port, role: 'primary' }], toml.mysql, toml.extra);
  client = await edge.connect({ database: 'cdb' });
  // the cache's Redis connection is up once a lookup is not bypassed as unavailable
  await waitFor(async () => {
    const before = await metric('bypasses_total', { reason: 'unavailable' });
    await read(client, 'SELECT v FROM items WHERE id = 3');
    return (await metric('bypasses_total', { reason: 'unavailable' })) === before || null;
  });
});

afterAll(async () => {
  await client?.end();
  await edge?.stop();
  await direct?.end().catch(() => undefined);
  await Promise.all([db?.destroy(), redis?.destroy()]);
});

describe('mysql result cache', () => {
  it('answers a repeated SELECT from the cache, without the backend', async () => {
    const hits = await metric('hits_total');
    expect(await read(client, 'SELECT v FROM items WHERE id = 1')).toEqual(['a']);
    // behind the proxy's back: only a cached answer still says 'a'
    await direct.query("UPDATE cdb.items SET v = 'behind' WHERE id = 1");
    expect(await read(client, 'SELECT v FROM items WHERE id = 1')).toEqual(['a']);
    const other = await edge.connect({ database: 'cdb' });
    expect(await read(other, 'SELECT v FROM items WHERE id = 1')).toEqual(['a']);
    await other.end();
    expect(await metric('hits_total')).toBeGreaterThanOrEqual(hits + 2);
    // a different literal is a different entry
    expect(await read(client, 'SELECT v FROM items WHERE id = 2')).toEqual(['b']);
  });

  it('prepared executions with the same parameters share an entry, in the binary protocol', async () => {
    await direct.query("INSERT INTO cdb.items VALUES (10, 'ten'), (11, 'eleven')");
    const select = 'SELECT v FROM items WHERE id = ?';
    const [first] = await client.execute<RowDataPacket[]>(select, [10]);
    expect(first).toEqual([{ v: 'ten' }]);
    await direct.query("UPDATE cdb.items SET v = 'changed' WHERE id IN (10, 11)");
    const other = await edge.connect({ database: 'cdb' });
    const [again] = await other.execute<RowDataPacket[]>(select, [10]);
    expect(again).toEqual([{ v: 'ten' }]);
    // other parameters, and the text protocol, are other entries
    const [eleven] = await other.execute<RowDataPacket[]>(select, [11]);
    expect(eleven).toEqual([{ v: 'changed' }]);
    expect(await read(other, 'SELECT v FROM items WHERE id = 10')).toEqual(['changed']);
    await other.end();
  });

  it('a write through the edge invalidates before its OK: the next read sees it', async () => {
    expect(await read(client, 'SELECT v FROM items WHERE id = 2')).toEqual(['b']);
    const invalidations = await metric('invalidations_total', { source: 'local' });
    await client.query("UPDATE items SET v = 'b2' WHERE id = 2");
    expect(await read(client, 'SELECT v FROM items WHERE id = 2')).toEqual(['b2']);
    await client.execute('UPDATE items SET v = ? WHERE id = ?', ['b3', 2]);
    const other = await edge.connect({ database: 'cdb' });
    expect(await read(other, 'SELECT v FROM items WHERE id = 2')).toEqual(['b3']);
    await other.end();
    expect(await metric('invalidations_total', { source: 'local' })).toBeGreaterThanOrEqual(invalidations + 2);
  });

  it('bumps the tables a transaction wrote at its COMMIT', async () => {
    const reader = await edge.connect({ database: 'cdb' });
    expect(await read(reader, 'SELECT v FROM items WHERE id = 3')).toEqual(['c']);
    await client.query('BEGIN');
    await client.query("UPDATE items SET v = 'c2' WHERE id = 3");
    // uncommitted: the reader refills the entry with the committed value
    expect(await read(reader, 'SELECT v FROM items WHERE id = 3')).toEqual(['c']);
    expect(await read(reader, 'SELECT v FROM items WHERE id = 3')).toEqual(['c']);
    await client.query('COMMIT');
    expect(await read(reader, 'SELECT v FROM items WHERE id = 3')).toEqual(['c2']);
    await reader.end();
  });

  it('never caches nondeterministic statements, locking reads, reads in a transaction or of unlisted tables', async () => {
    const statements: [string, string][] = [
      ['SELECT v, NOW() FROM items WHERE id = 2', 'nondeterministic'],
      ['SELECT v, RAND() FROM items WHERE id = 2', 'nondeterministic'],
      ['SELECT v, UUID() FROM items WHERE id = 2', 'nondeterministic'],
      ['SELECT v, @x FROM items WHERE id = 2', 'nondeterministic'],
      ['SELECT v FROM items WHERE id = 2 FOR UPDATE', 'not_cacheable'],
    ];
    for (const [i, [sql, reason]] of statements.entries()) {
      const bypassed = await metric('bypasses_total', { reason });
      await read(client, sql);
      await direct.query('UPDATE cdb.items SET v = ? WHERE id = 2', [`direct ${i}`]);
      expect(await read(client, sql)).toEqual([`direct ${i}`]);
      expect(await metric('bypasses_total', { reason })).toBeGreaterThanOrEqual(bypassed + 2);
    }
    // cached in autocommit, changed behind the proxy: inside a transaction the backend answers
    await read(client, 'SELECT v FROM items WHERE id = 2');
    expect(await read(client, 'SELECT v FROM items WHERE id = 2')).toEqual(['direct 4']);
    await direct.query("UPDATE cdb.items SET v = 'in transaction' WHERE id = 2");
    const inTransaction = await metric('bypasses_total', { reason: 'transaction' });
    await client.query('BEGIN');
    expect(await read(client, 'SELECT v FROM items WHERE id = 2')).toEqual(['in transaction']);
    await client.query('COMMIT');
    expect(await metric('bypasses_total', { reason: 'transaction' })).toBe(inTransaction + 1);
    expect(await read(client, 'SELECT v FROM items WHERE id = 2')).toEqual(['direct 4']);
    await read(client, 'SELECT v FROM plain WHERE id = 1');
    await direct.query("UPDATE cdb.plain SET v = 'p2' WHERE id = 1");
    expect(await read(client, 'SELECT v FROM plain WHERE id = 1')).toEqual(['p2']);
    expect(await metric('bypasses_total', { reason: 'table_not_cached' })).toBeGreaterThanOrEqual(2);
  });

  it('runs identical concurrent misses once per edge (singleflight)', async () => {
    const readers = await Promise.all(Array.from({ length: 8 }, () => edge.connect({ database: 'cdb' })));
    const joins = await metric('singleflight_joins_total');
    const results = await Promise.all(readers.map((r) => read(r, 'SELECT v FROM items WHERE id IN (1, 3) ORDER BY id')));
    expect(results.every((r) => r.join() === 'behind,c2')).toBe(true);
    expect(await metric('singleflight_joins_total')).toBeGreaterThan(joins);
    await Promise.all(readers.map((r) => r.end()));
  });

  it('GET /mysql/cache reports the hit ratio and the largest entries by fingerprint, never literal values', async () => {
    const report = (await (await fetch(`${edge.admin}/mysql/cache`)).json()) as { hit_ratio: number; usable: boolean; largest_entries: { fingerprint: string; bytes: number }[] };
    expect(report.usable).toBe(true);
    expect(report.hit_ratio).toBeGreaterThan(0);
    expect(report.largest_entries.length).toBeGreaterThan(0);
    const text = JSON.stringify(report.largest_entries);
    expect(text).toMatch(/items/);
    expect(text).not.toMatch(/behind|c2|'a'|= 1\b/);
  });

  it('keeps answering, uncached, while Redis is stopped, and caches again once it is back', async () => {
    await read(client, 'SELECT v FROM items WHERE id = 1');
    await redis.primary.stop();
    await direct.query("UPDATE cdb.items SET v = 'while down' WHERE id = 1");
    await waitFor(async () => (await read(client, 'SELECT v FROM items WHERE id = 1'))[0] === 'while down' || null);
    const bypassed = await metric('bypasses_total', { reason: 'unavailable' });
    for (let i = 0; i < 5; i++) expect(await read(client, 'SELECT v FROM items WHERE id = 1')).toEqual(['while down']);
    expect(await metric('bypasses_total', { reason: 'unavailable' })).toBeGreaterThanOrEqual(bypassed + 5);
    await client.query("UPDATE items SET v = 'edge while down' WHERE id = 1");
    expect(await read(client, 'SELECT v FROM items WHERE id = 1')).toEqual(['edge while down']);
    await redis.primary.start();
    const hits = await metric('hits_total');
    await waitFor(async () => {
      // never the entry cached before the outage: the write made while Redis was away is seen
      expect(await read(client, 'SELECT v FROM items WHERE id = 1')).toEqual(['edge while down']);
      return (await metric('hits_total')) > hits || null;
    });
  });

  it('a Redis that stops answering (SIGSTOP) is dropped within about a second: reads go on uncached', async () => {
    await direct.query("INSERT INTO cdb.items VALUES (20, 'twenty')");
    expect(await read(client, 'SELECT v FROM items WHERE id = 20')).toEqual(['twenty']);
    const pid = redis.primary.pid as number;
    process.kill(pid, 'SIGSTOP');
    try {
      await direct.query("UPDATE cdb.items SET v = 'frozen' WHERE id = 20");
      const started = Date.now();
      expect(await read(client, 'SELECT v FROM items WHERE id = 20')).toEqual(['frozen']);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await read(client, 'SELECT v FROM items WHERE id = 20')).toEqual(['frozen']);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await waitFor(async () => {
      const hits = await metric('hits_total');
      await read(client, 'SELECT v FROM items WHERE id = 20');
      return (await metric('hits_total')) > hits || null;
    });
  });

  it('checker: reads through two edges sharing one Redis never return a value older than a write acknowledged before they started', async () => {
    const toml = cacheToml(redis.primary.port);
    const second = await startEdge([{ name: 'db', host: db.primary.host, port: db.primary.port, role: 'primary' }], toml.mysql, toml.extra);
    const edges = [edge, second];
    try {
      const acked = new Map<number, number>([1, 2, 3, 4].map((k) => [k, 0]));
      const violations: string[] = [];
      let reads = 0;
      const deadline = Date.now() + 8000;
      const writer = async (e: EdgeHarness, keys: number[]) => {
        const c = await e.connect({ database: 'cdb' });
        for (let n = 1; Date.now() < deadline; n++) {
          for (const k of keys) {
            if (n % 3 === 0) {
              await c.query('BEGIN');
              await c.query('UPDATE counters SET n = ? WHERE id = ?', [n, k]);
              await c.query('COMMIT');
            } else await c.execute('UPDATE counters SET n = ? WHERE id = ?', [n, k]);
            acked.set(k, n);
          }
        }
        await c.end();
      };
      const reader = async (e: EdgeHarness) => {
        const c = await e.connect({ database: 'cdb' });
        while (Date.now() < deadline) {
          for (const k of [1, 2, 3, 4]) {
            const floor = acked.get(k) as number;
            // text and binary protocol reads alternate
            const [n] = reads % 2 === 0 ? await read(c, `SELECT n FROM counters WHERE id = ${k}`) : ((await c.execute<RowDataPacket[]>('SELECT n FROM counters WHERE id = ?', [k]))[0].map((r) => String(r['n'])) as [string]);
            reads++;
            if (Number(n) < floor) violations.push(`key ${k}: read ${n} after ${floor} was acknowledged`);
          }
        }
        await c.end();
      };
      const hits = await metric('hits_total');
      await Promise.all([writer(edge, [1, 2]), writer(second, [3, 4]), ...edges.flatMap((e) => [reader(e), reader(e), reader(e)])]);
      expect(violations).toEqual([]);
      expect(reads).toBeGreaterThan(100);
      // the checker ran against the cache, not around it
      expect((await metric('hits_total')) + (await second.metric('dbproxy_mysql_cache_hits_total'))).toBeGreaterThan(hits);
    } finally {
      await second.stop();
    }
  });
});
