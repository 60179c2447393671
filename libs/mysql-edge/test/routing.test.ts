// Routing through mysql-edge (beside the real topology service) against a real MariaDB primary and
// GTID replica: safe reads on the replica, writes and unsafe reads on the primary, transaction and
// session pins, read-after-write, replayed USE/SET NAMES, the read-only listener, fallback while the
// replica's replication or the replica itself is stopped, multi-statement refusal.
import { startMariaDb, type MariaDbServer } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: { primary: Connection; replica: Connection };

const counted = (route: string, backend: string) => edge.metric('dbproxy_mysql_queries_total', { route, backend });
const connectDirect = (server: MariaDbServer) => createConnection({ host: server.host, port: server.port, user: 'root' });

/**
 * Gives each server a table `app.node` holding its own name, written with the binary log off so it
 * never replicates: a safe read joining it shows which server ran it.
 */
async function markServer(c: Connection, name: string): Promise<void> {
  await c.query('SET SESSION sql_log_bin = 0');
  await c.query('CREATE TABLE app.node (name VARCHAR(10))');
  await c.query('INSERT INTO app.node VALUES (?)', [name]);
  await c.query('SET SESSION sql_log_bin = 1');
}

/** Reads item `id` with the name of the server that answered (a safe read: replica-eligible). */
async function itemWithNode(c: Connection, id: number): Promise<RowDataPacket[]> {
  const [rows] = await c.query<RowDataPacket[]>('SELECT i.name, n.name AS node FROM items i, node n WHERE i.id = ?', [id]);
  return rows;
}

async function serverIdOn(c: Connection): Promise<number> {
  const [[row]] = await c.query<RowDataPacket[]>('SELECT @@server_id AS id');
  return Number(row?.['id']);
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  const replica = db.replicas[0]!;
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'reserved_pool = 2' },
      { name: 'replica', host: replica.host, port: replica.port, role: 'replica' },
    ],
    'read_after_write_seconds = 1',
  );
  direct = { primary: await connectDirect(db.primary), replica: await connectDirect(replica) };
  await direct.primary.query('CREATE DATABASE app');
  await direct.primary.query('CREATE TABLE app.items (id INT PRIMARY KEY, name VARCHAR(40) CHARACTER SET utf8mb4)');
  await direct.primary.query("INSERT INTO app.items VALUES (1, 'one'), (2, 'two'), (3, 'three')");
  await db.waitForReplicaCatchUp();
  await markServer(direct.primary, 'primary');
  await markServer(direct.replica, 'replica');
});

afterAll(async () => {
  await direct?.primary.end();
  await direct?.replica.end().catch(() => direct.replica.destroy());
  await edge?.stop();
  await db?.destroy();
});

describe('read/write split', () => {
  it('serves safe reads from the replica and writes from the primary (query and execute)', async () => {
    const c = await edge.connect({ database: 'app' });
    const before = await counted('replica', 'replica');
    const [q] = await c.query<RowDataPacket[]>('SELECT i.name, n.name AS node FROM items i, node n WHERE i.id = 2');
    const [e] = await c.execute<RowDataPacket[]>('SELECT i.name, n.name AS node FROM items i, node n WHERE i.id = ?', [3]);
    expect(q).toEqual([{ name: 'two', node: 'replica' }]);
    expect(e).toEqual([{ name: 'three', node: 'replica' }]);
    // the query, the execute, and the prepare mysql2 sends before it
    expect(await counted('replica', 'replica')).toBe(before + 3);
    const writes = await counted('primary', 'primary');
    await c.execute('INSERT INTO items VALUES (?, ?)', [10, 'ten']);
    expect(await counted('primary', 'primary')).toBe(writes + 2); // its prepare and its execute
    const [[row]] = await direct.primary.query<RowDataPacket[]>('SELECT name FROM app.items WHERE id = 10');
    expect(row).toEqual({ name: 'ten' });
    await c.end();
  });

  it('sends unsafe reads (locking, state functions, variables) to the primary', async () => {
    const c = await edge.connect({ database: 'app' });
    const before = await counted('primary', 'primary');
    const [[server]] = await c.query<RowDataPacket[]>('SELECT @@server_id AS id');
    expect(server?.['id']).toBe(db.primary.serverId);
    await c.query('SELECT name FROM items WHERE id = 1 FOR UPDATE');
    expect(await counted('primary', 'primary')).toBe(before + 2);
    await c.end();
  });

  it('reads its own write right after an autocommit write (read-after-write window), then returns to the replica', async () => {
    const c = await edge.connect({ database: 'app' });
    const pinnedReads = await counted('read_after_write', 'primary');
    await c.query("INSERT INTO items VALUES (20, 'twenty')");
    expect(await itemWithNode(c, 20)).toEqual([{ name: 'twenty', node: 'primary' }]);
    expect(await counted('read_after_write', 'primary')).toBe(pinnedReads + 1);
    await new Promise((r) => setTimeout(r, 1_100));
    await db.waitForReplicaCatchUp();
    expect(await itemWithNode(c, 20)).toEqual([{ name: 'twenty', node: 'replica' }]);
    await c.end();
  });

  it('opens the read-after-write window again when a transaction that wrote commits, however long it took', async () => {
    const c = await edge.connect({ database: 'app' });
    await c.query('BEGIN');
    await c.query("INSERT INTO items VALUES (21, 'twenty-one')");
    await new Promise((r) => setTimeout(r, 1_200)); // longer than read_after_write_seconds
    await c.query('COMMIT');
    const before = await counted('read_after_write', 'primary');
    expect(await itemWithNode(c, 21)).toEqual([{ name: 'twenty-one', node: 'primary' }]);
    expect(await counted('read_after_write', 'primary')).toBe(before + 1);
    await c.end();
  });
});

describe('pins', () => {
  it('sees its own uncommitted write inside BEGIN, on one primary connection, until COMMIT', async () => {
    const c = await edge.connect({ database: 'app' });
    const pins = await edge.metric('dbproxy_mysql_pins_total', { cause: 'transaction' });
    await c.query('BEGIN');
    await c.query("INSERT INTO items VALUES (30, 'thirty')");
    const [inside] = await c.query<RowDataPacket[]>('SELECT name FROM items WHERE id = 30');
    expect(inside).toEqual([{ name: 'thirty' }]);
    const [[a]] = await c.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
    const [[b]] = await c.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
    expect(a?.['id']).toBe(b?.['id']);
    const [[other]] = await direct.primary.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM app.items WHERE id = 30');
    expect(other?.['n']).toBe(0);
    await c.query('COMMIT');
    expect(await edge.metric('dbproxy_mysql_pins_total', { cause: 'transaction' })).toBe(pins + 1);
    const [[committed]] = await direct.primary.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM app.items WHERE id = 30');
    expect(committed?.['n']).toBe(1);
    await c.end();
  });

  it('pins from SET autocommit = 0 until autocommit is back on', async () => {
    const c = await edge.connect({ database: 'app' });
    await c.query('SET autocommit = 0');
    await c.query("INSERT INTO items VALUES (31, 'thirty-one')");
    const [inside] = await c.query<RowDataPacket[]>('SELECT name FROM items WHERE id = 31');
    expect(inside).toEqual([{ name: 'thirty-one' }]);
    await c.query('ROLLBACK');
    const [gone] = await c.query<RowDataPacket[]>('SELECT name FROM items WHERE id = 31');
    expect(gone).toEqual([]);
    await c.query('SET autocommit = 1');
    const [[row]] = await c.query<RowDataPacket[]>('SELECT @@autocommit AS ac');
    expect(row?.['ac']).toBe(1);
    await c.end();
  });

  it('keeps a user variable for the session: still there ten statements later', async () => {
    const c = await edge.connect({ database: 'app' });
    await c.query("SET @x = 'kept'");
    for (let i = 0; i < 10; i++) await c.query('SELECT name FROM items WHERE id = ?', [1 + (i % 3)]);
    const [[row]] = await c.query<RowDataPacket[]>('SELECT @x AS x');
    expect(row?.['x']).toBe('kept');
    expect(await edge.metric('dbproxy_mysql_pins_total', { cause: 'session_state' })).toBeGreaterThanOrEqual(1);
    await c.end();
  });

  it('does not leak session state between clients sharing pooled connections', async () => {
    const a = await edge.connect({ database: 'app' });
    await a.query('SET @leak = 42');
    await a.query('CREATE TEMPORARY TABLE tmp_leak (id INT)');
    await a.end();
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 5; i++) {
      const b = await edge.connect({ database: 'app' });
      await b.query('BEGIN');
      const [[row]] = await b.query<RowDataPacket[]>('SELECT @leak AS v');
      expect(row?.['v']).toBeNull();
      await expect(b.query('SELECT * FROM tmp_leak')).rejects.toMatchObject({ errno: 1146 });
      await b.query('COMMIT');
      await b.end();
    }
  });
});

describe('replayed settings', () => {
  it('replays USE and SET NAMES on every borrowed connection', async () => {
    const c = await edge.connect();
    await c.query('USE app');
    await c.query('SET NAMES latin1');
    for (let i = 0; i < 6; i++) {
      const [[row]] = await c.query<RowDataPacket[]>('SELECT DATABASE() AS db, @@character_set_client AS cs, name FROM items WHERE id = 1');
      expect(row).toEqual({ db: 'app', cs: 'latin1', name: 'one' });
    }
    await c.query('SET NAMES utf8mb4');
    const [[after]] = await c.query<RowDataPacket[]>('SELECT @@character_set_client AS cs');
    expect(after?.['cs']).toBe('utf8mb4');
    await c.end();
  });

  it('applies the handshake database and character set to pooled connections', async () => {
    const c = await edge.connect({ database: 'app', charset: 'UTF8MB4_UNICODE_CI' });
    const [[row]] = await c.query<RowDataPacket[]>('SELECT DATABASE() AS db, @@collation_connection AS coll');
    expect(row).toEqual({ db: 'app', coll: 'utf8mb4_unicode_ci' });
    await c.end();
  });
});

describe('listeners and refusals', () => {
  it('refuses writes on the read-only listener with ERR 1290 and serves reads from the replica', async () => {
    const c = await edge.connect({ port: edge.roPort, database: 'app' });
    await expect(c.query("INSERT INTO items VALUES (40, 'forty')")).rejects.toMatchObject({ errno: 1290, sqlState: 'HY000' });
    const before = await counted('replica', 'replica');
    const [[row]] = await c.query<RowDataPacket[]>('SELECT @@server_id AS id');
    expect(row?.['id']).toBe(db.replicas[0]!.serverId);
    expect(await counted('replica', 'replica')).toBe(before + 1);
    await c.end();
  });

  it('falls back to the primary while the replica\'s replication is stopped (lagging), keeps its pool, and returns once it replicates', async () => {
    const ro = await edge.connect({ port: edge.roPort, database: 'app' });
    expect(await serverIdOn(ro)).toBe(db.replicas[0]!.serverId);
    await direct.replica.query('STOP SLAVE');
    try {
      await edge.waitForBackend('replica', (b) => b.lagging === true, 'topology to find the replica with stopped replication lagging');
      const pool = (await edge.backend('replica')).pool;
      expect(pool?.['total']).toBeGreaterThan(0);
      const fallbacks = await counted('fallback', 'primary');
      const noReplica = await edge.metric('dbproxy_mysql_replica_fallbacks_total', { reason: 'no_replica' });
      const [[row]] = await ro.query<RowDataPacket[]>('SELECT @@server_id AS id, name FROM items WHERE id = 1');
      expect(row).toEqual({ id: db.primary.serverId, name: 'one' });
      expect(await counted('fallback', 'primary')).toBe(fallbacks + 1);
      // counted as a plain number and read at scrape time (metrics.ts)
      expect(await edge.metric('dbproxy_mysql_replica_fallbacks_total', { reason: 'no_replica' })).toBe(noReplica + 1);
      // the lagging replica's pool was not destroyed
      expect((await edge.backend('replica')).pool?.['total']).toBe(pool?.['total']);
    } finally {
      await direct.replica.query('START SLAVE');
    }
    await edge.waitForBackend('replica', (b) => b.lagging === false, 'topology to find the replica replicating again');
    expect(await serverIdOn(ro)).toBe(db.replicas[0]!.serverId);
    await ro.end();
  });

  it('falls back to the primary while the replica server is stopped, and returns to it once it is back', async () => {
    const replica = db.replicas[0]!;
    const ro = await edge.connect({ port: edge.roPort, database: 'app' });
    const rw = await edge.connect({ database: 'app' });
    expect(await itemWithNode(rw, 1)).toEqual([{ name: 'one', node: 'replica' }]);
    await direct.replica.end();
    await replica.stop();
    try {
      await edge.waitForBackend('replica', (b) => b.healthy === false, 'topology to find the stopped replica down');
      expect(await serverIdOn(ro)).toBe(db.primary.serverId);
      expect(await itemWithNode(rw, 1)).toEqual([{ name: 'one', node: 'primary' }]);
    } finally {
      await replica.start();
      direct.replica = await connectDirect(replica);
    }
    await db.waitForReplicaCatchUp();
    await edge.waitForBackend('replica', (b) => b.healthy === true && b.lagging === false, 'topology to find the replica up again', 30_000);
    expect(await serverIdOn(ro)).toBe(replica.serverId);
    expect(await itemWithNode(rw, 1)).toEqual([{ name: 'one', node: 'replica' }]);
    await ro.end();
    await rw.end();
  });

  it('rejects multi-statement requests with a clear ERR', async () => {
    const c = await edge.connect({ multipleStatements: true });
    await expect(c.query('SELECT 1; SELECT 2')).rejects.toMatchObject({ errno: 1235, message: expect.stringContaining('Multi-statement') });
    const [[ok]] = await c.query<RowDataPacket[]>('SELECT 3 AS n');
    expect(ok?.['n']).toBe(3);
    await c.end();
  });

  it('passes backend errors through with their errno and SQLSTATE', async () => {
    const c = await edge.connect({ database: 'app' });
    await expect(c.query('SELECT * FROM no_such_table')).rejects.toMatchObject({ errno: 1146, sqlState: '42S02' });
    await expect(c.query("INSERT INTO items VALUES (1, 'dup')")).rejects.toMatchObject({ errno: 1062, sqlState: '23000' });
    await expect(c.query('SELEC oops')).rejects.toMatchObject({ errno: 1064, sqlState: '42000' });
    expect(await edge.metric('dbproxy_mysql_errors_total', { code: '1062' })).toBeGreaterThanOrEqual(1);
    await c.end();
  });
});
