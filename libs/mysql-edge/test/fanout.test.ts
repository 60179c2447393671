// [[mysql.fanout]] mode = "best_effort" against three real MariaDB primaries (the default shard and
// two target shards): DML on the fanout table lands on its own shard and on both targets (checked on
// each server directly) through mysql2 query/execute and the mariadb CLI; other tables are not
// copied; transaction copies go after COMMIT only; the concurrency bound holds while a target is
// blocked; a stopped target gives the client its OK with a warning in SHOW WARNINGS (next to the
// backend's own), counted in metrics, while the other target gets its copy.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startMariaDb, waitFor } from '@dbproxy/testing';
import { createConnection, type Connection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(240_000);

const run = promisify(execFile);

type Db = Awaited<ReturnType<typeof startMariaDb>>;
let dbs: Db[] = [];
let direct: Connection[] = [];
let edge: EdgeHarness;
let client: Connection;

const SHARDS = ['default', 's1', 's2'] as const;
const SETUP = ['CREATE DATABASE appdb', 'CREATE TABLE appdb.audit_log (id INT PRIMARY KEY, v VARCHAR(40))', 'CREATE TABLE appdb.other (id INT PRIMARY KEY, v VARCHAR(40))', 'CREATE TABLE appdb.big_log (id INT PRIMARY KEY, v TEXT)'];
const FANOUT = `
[[mysql.fanout]]
name = "audit"
table = "audit_log"
targets = ["s1", "s2"]
mode = "best_effort"
concurrency = 2
timeout_seconds = 8

[[mysql.fanout]]
name = "big"
table = "appdb.big_log"
targets = ["s1"]
concurrency = 1
timeout_seconds = 1
max_transaction_bytes = 300
`;

/** `v` of row `id` of `table` on each server directly: [default, s1, s2]; null where absent. */
async function rowEverywhere(id: number, table = 'audit_log'): Promise<(string | null)[]> {
  return Promise.all(
    direct.map(async (c) => {
      const [rows] = await c.query<RowDataPacket[]>(`SELECT v FROM appdb.${table} WHERE id = ?`, [id]);
      return rows.length === 0 ? null : String(rows[0]?.['v']);
    }),
  );
}

async function cli(sql: string, extra: string[] = []): Promise<string> {
  const args = ['-h', '127.0.0.1', '-P', String(edge.rwPort), '-u', 'app', '-papp-secret', '--ssl=0', '--batch', ...extra, 'appdb', '-e', sql];
  const { stdout, stderr } = await run('mariadb', args, { timeout: 30_000 });
  return `${stdout}${stderr}`;
}

const copies = (target: string, result: string) => edge.metric('dbproxy_mysql_fanout_copies_total', { fanout: 'audit', target, result });

beforeAll(async () => {
  dbs = await Promise.all(SHARDS.map(() => startMariaDb({ replicas: 0 })));
  direct = await Promise.all(dbs.map((db) => createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' })));
  for (const c of direct) for (const sql of SETUP) await c.query(sql);
  const backends = dbs.map((db, i) => ({ name: `db-${SHARDS[i]}`, host: db.primary.host, port: db.primary.port, role: 'primary' as const, shard: SHARDS[i] }));
  edge = await startEdge(backends, FANOUT);
  client = await edge.connect({ database: 'appdb' });
});

afterAll(async () => {
  await client?.end();
  await edge?.stop();
  for (const c of direct) await c.end().catch(() => undefined);
  await Promise.all(dbs.map((db) => db.destroy()));
});

describe('fanout copies', () => {
  it('copies INSERT, UPDATE and DELETE sent with query() to both targets', async () => {
    const [insert] = await client.query<ResultSetHeader>("INSERT INTO audit_log VALUES (1, 'one')");
    expect(insert.affectedRows).toBe(1);
    expect(insert.warningStatus).toBe(0);
    expect(await rowEverywhere(1)).toEqual(['one', 'one', 'one']);
    await client.query("UPDATE audit_log SET v = 'uno' WHERE id = 1");
    expect(await rowEverywhere(1)).toEqual(['uno', 'uno', 'uno']);
    await client.query("REPLACE INTO appdb.audit_log VALUES (2, 'two')");
    expect(await rowEverywhere(2)).toEqual(['two', 'two', 'two']);
    await client.query('DELETE FROM audit_log WHERE id = 1');
    expect(await rowEverywhere(1)).toEqual([null, null, null]);
    expect(await copies('s1', 'ok')).toBeGreaterThanOrEqual(4);
    expect(await copies('s2', 'ok')).toBeGreaterThanOrEqual(4);
  });

  it('copies prepared executions with their parameters', async () => {
    await client.execute('INSERT INTO audit_log (id, v) VALUES (?, ?)', [3, 'three']);
    await client.execute('INSERT INTO audit_log (id, v) VALUES (?, ?)', [4, 'four']);
    expect(await rowEverywhere(3)).toEqual(['three', 'three', 'three']);
    expect(await rowEverywhere(4)).toEqual(['four', 'four', 'four']);
    await client.execute('UPDATE audit_log SET v = ? WHERE id = ?', ['vier', 4]);
    expect(await rowEverywhere(4)).toEqual(['vier', 'vier', 'vier']);
    await client.execute('DELETE FROM audit_log WHERE id = ?', [3]);
    expect(await rowEverywhere(3)).toEqual([null, null, null]);
  });

  it('does not copy statements on other tables, nor reads', async () => {
    await client.query("INSERT INTO other VALUES (1, 'mine')");
    await client.execute('INSERT INTO other VALUES (?, ?)', [2, 'mine too']);
    await client.query('INSERT INTO other SELECT id + 100, v FROM audit_log WHERE id = 2');
    expect(await rowEverywhere(1, 'other')).toEqual(['mine', null, null]);
    expect(await rowEverywhere(2, 'other')).toEqual(['mine too', null, null]);
    expect(await rowEverywhere(102, 'other')).toEqual(['two', null, null]);
  });

  it('copies what the mariadb CLI sends', async () => {
    await cli("INSERT INTO audit_log VALUES (5, 'cli')");
    expect(await rowEverywhere(5)).toEqual(['cli', 'cli', 'cli']);
  });

  it('sends the copies of a transaction after its COMMIT, in order, and none after ROLLBACK', async () => {
    await client.query('BEGIN');
    await client.query("INSERT INTO audit_log VALUES (10, 'first')");
    await client.execute('UPDATE audit_log SET v = ? WHERE id = ?', ['second', 10]);
    await client.query("INSERT INTO audit_log VALUES (11, 'x')");
    // uncommitted on its own shard, not yet sent to the targets
    expect(await rowEverywhere(10)).toEqual([null, null, null]);
    await client.query('COMMIT');
    expect(await rowEverywhere(10)).toEqual(['second', 'second', 'second']);
    expect(await rowEverywhere(11)).toEqual(['x', 'x', 'x']);

    const discardedBefore = await copies('s1', 'discarded');
    await client.query('START TRANSACTION');
    await client.query("INSERT INTO audit_log VALUES (12, 'rolled back')");
    await client.query('ROLLBACK');
    expect(await rowEverywhere(12)).toEqual([null, null, null]);
    expect(await copies('s1', 'discarded')).toBe(discardedBefore + 1);

    await client.query('BEGIN');
    await client.query("INSERT INTO audit_log VALUES (13, 'kept')");
    await client.query('SAVEPOINT sp');
    await client.query("INSERT INTO audit_log VALUES (14, 'undone')");
    await client.query('ROLLBACK TO SAVEPOINT sp');
    await client.query('COMMIT');
    expect(await rowEverywhere(13)).toEqual(['kept', 'kept', 'kept']);
    expect(await rowEverywhere(14)).toEqual([null, null, null]);

    // autocommit = 0: the COMMIT that ends each implicit transaction sends its copies
    await client.query('SET autocommit = 0');
    await client.query("INSERT INTO audit_log VALUES (15, 'implicit')");
    expect(await rowEverywhere(15)).toEqual([null, null, null]);
    await client.query('COMMIT');
    await client.query('SET autocommit = 1');
    expect(await rowEverywhere(15)).toEqual(['implicit', 'implicit', 'implicit']);
  });

  it('discards the copies of a transaction a deadlock rolled back; the survivor\'s arrive after its COMMIT', async () => {
    await client.query("INSERT INTO other VALUES (60, 'l'), (61, 'r')");
    const [a, b] = await Promise.all([edge.connect({ database: 'appdb' }), edge.connect({ database: 'appdb' })]);
    const discardedBefore = await copies('s1', 'discarded');
    await a!.query('BEGIN');
    await b!.query('BEGIN');
    await a!.query("INSERT INTO audit_log VALUES (50, 'a')");
    await b!.query("INSERT INTO audit_log VALUES (51, 'b')");
    await a!.query("UPDATE other SET v = 'a' WHERE id = 60");
    await b!.query("UPDATE other SET v = 'b' WHERE id = 61");
    const crossed = await Promise.allSettled([a!.query("UPDATE other SET v = 'a' WHERE id = 61"), b!.query("UPDATE other SET v = 'b' WHERE id = 60")]);
    expect(crossed.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.errno)).toEqual([1213]);
    await a!.query('COMMIT');
    await b!.query('COMMIT');
    const survivor = crossed[0]?.status === 'fulfilled' ? 50 : 51;
    const victim = survivor === 50 ? 51 : 50;
    expect((await rowEverywhere(survivor)).every((v) => v !== null)).toBe(true);
    expect(await rowEverywhere(victim)).toEqual([null, null, null]);
    expect(await copies('s1', 'discarded')).toBe(discardedBefore + 1);
    await Promise.all([a!.end(), b!.end()]);
  });

  it('keeps at most `concurrency` copies in flight while a target is blocked', async () => {
    // a table lock on s1's server holds every copy sent there
    const locker = await createConnection({ host: dbs[1]?.primary.host, port: dbs[1]?.primary.port, user: 'root' });
    await locker.query('LOCK TABLES appdb.audit_log WRITE');
    const clients = await Promise.all([0, 1, 2].map(() => edge.connect({ database: 'appdb' })));
    const writes = clients.map((c, i) => c.query<ResultSetHeader>(`INSERT INTO audit_log VALUES (${300 + i}, 'lane')`));
    try {
      await waitFor(async () => (await edge.metric('dbproxy_mysql_fanout_copies_in_flight', { fanout: 'audit' })) === 2 || null);
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await edge.metric('dbproxy_mysql_fanout_copies_in_flight', { fanout: 'audit' })).toBe(2);
      // s2 is free, yet at least one copy to it still waits for a slot
      const [onS2] = await direct[2]!.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM appdb.audit_log WHERE id BETWEEN 300 AND 302');
      expect(Number(onS2[0]?.['n'])).toBeLessThan(3);
    } finally {
      await locker.query('UNLOCK TABLES');
      await locker.end();
    }
    const results = await Promise.all(writes);
    for (const [r] of results) expect(r.warningStatus).toBe(0);
    for (const id of [300, 301, 302]) expect(await rowEverywhere(id)).toEqual(['lane', 'lane', 'lane']);
    expect(await edge.metric('dbproxy_mysql_fanout_copies_in_flight_max', { fanout: 'audit' })).toBe(2);
    await Promise.all(clients.map((c) => c.end()));
  });

  it('refuses a multi-table DELETE naming the fanout table (1235), touching nothing', async () => {
    await client.query("INSERT INTO other VALUES (40, 'join')");
    await expect(client.query('DELETE a FROM audit_log a JOIN other o ON o.id = a.id WHERE o.id = 40')).rejects.toMatchObject({ errno: 1235, sqlState: '42000' });
    await expect(client.query('UPDATE other o JOIN audit_log a ON o.id = a.id SET a.v = o.v')).rejects.toMatchObject({ errno: 1235 });
    expect(await rowEverywhere(40, 'other')).toEqual(['join', null, null]);
  });

  it('refuses a statement whose copies would take the transaction past max_transaction_bytes (1197); ROLLBACK still works', async () => {
    await client.query('BEGIN');
    await client.query(`INSERT INTO big_log VALUES (1, '${'x'.repeat(100)}')`);
    await expect(client.query(`INSERT INTO big_log VALUES (2, '${'y'.repeat(400)}')`)).rejects.toMatchObject({ errno: 1197, sqlState: 'HY000' });
    await client.query('ROLLBACK');
    expect(await rowEverywhere(1, 'big_log')).toEqual([null, null, null]);
    expect(await rowEverywhere(2, 'big_log')).toEqual([null, null, null]);
  });

  it('answers within timeout_seconds when a target does not: the OK carries a timeout warning', async () => {
    const locker = await createConnection({ host: dbs[1]?.primary.host, port: dbs[1]?.primary.port, user: 'root' });
    await locker.query('LOCK TABLES appdb.big_log WRITE');
    try {
      const started = Date.now();
      const [insert] = await client.query<ResultSetHeader>("INSERT INTO big_log VALUES (10, 'slow')");
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(900);
      expect(waited).toBeLessThan(5000);
      expect(insert.warningStatus).toBe(1);
      const [warnings] = await client.query<RowDataPacket[]>('SHOW WARNINGS');
      expect(String(warnings[0]?.['Message'])).toMatch(/timeout_seconds.*fanout "big" copy to shard "s1" \(backend "db-s1"\)/);
      expect(await edge.metric('dbproxy_mysql_fanout_copies_total', { fanout: 'big', target: 's1', result: 'timeout' })).toBe(1);
    } finally {
      await locker.query('UNLOCK TABLES');
      await locker.end();
    }
  });

  it('answers OK with a warning when a target is down; SHOW WARNINGS names it beside the backend\'s own warnings', async () => {
    await (dbs[2] as Db).primary.stop();
    const failedBefore = await copies('s2', 'failed');
    const [insert] = await client.query<ResultSetHeader>("INSERT INTO audit_log VALUES (20, 'partial')");
    expect(insert.affectedRows).toBe(1);
    expect(insert.warningStatus).toBe(1);
    const [warnings] = await client.query<RowDataPacket[]>('SHOW WARNINGS');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ Level: 'Warning', Code: 1296 });
    expect(String(warnings[0]?.['Message'])).toMatch(/fanout "audit" copy to shard "s2"/);
    expect(await copies('s2', 'failed')).toBe(failedBefore + 1);
    // the other target got its copy
    const [onS1] = await direct[1]!.query<RowDataPacket[]>('SELECT v FROM appdb.audit_log WHERE id = 20');
    expect(onS1).toEqual([{ v: 'partial' }]);
    const [own] = await direct[0]!.query<RowDataPacket[]>('SELECT v FROM appdb.audit_log WHERE id = 20');
    expect(own).toEqual([{ v: 'partial' }]);

    // the next statement clears the edge's warnings, as a server does
    await client.query('SELECT 1');
    const [cleared] = await client.query<RowDataPacket[]>('SHOW WARNINGS');
    expect(cleared).toEqual([]);

    // a backend warning (duplicate key under IGNORE) and the copy failure, in that order
    const [ignore] = await client.execute<ResultSetHeader>('INSERT IGNORE INTO audit_log VALUES (?, ?), (?, ?)', [21, 'a', 21, 'b']);
    expect(ignore.warningStatus).toBe(2);
    const [both] = await client.query<RowDataPacket[]>('SHOW WARNINGS');
    expect(both.map((w) => w['Code'])).toEqual([1062, 1296]);
    // names the target's backend: as the one that failed, or (once topology marked it down) in the no-usable-primary error
    expect(String(both[1]?.['Message'])).toMatch(/copy to shard "s2"/);
    expect(String(both[1]?.['Message'])).toMatch(/backend "db-s2"/);
  });

  it('shows the warning in the mariadb CLI (--show-warnings)', async () => {
    const out = await cli("INSERT INTO audit_log VALUES (22, 'cli partial')", ['--show-warnings']);
    expect(out).toMatch(/Warning \(Code 1296\): Got error \d+ '.*' from fanout "audit" copy to shard "s2"/);
    const [onS1] = await direct[1]!.query<RowDataPacket[]>('SELECT v FROM appdb.audit_log WHERE id = 22');
    expect(onS1).toEqual([{ v: 'cli partial' }]);
  });
});

