// Against a real MariaDB primary + replica: compound statements (procedures, functions, triggers,
// events, BEGIN NOT ATOMIC) run as one statement on the primary through mysql2 and the mariadb CLI
// with DELIMITER; the read-only listener refuses locking reads, sequences, locks, HANDLER, XA
// (1290, nothing reaches a server) and still serves reads, transaction control and session settings.
import { spawn } from 'node:child_process';
import { startMariaDb } from '@dbproxy/testing';
import type { RowDataPacket } from 'mysql2/promise';
import { closeDirect, openDirect, startEdge, type DirectConnections, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let direct: DirectConnections;

const counted = (route: string, backend: string) => edge.metric('dbproxy_mysql_queries_total', { route, backend });

beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  const replica = db.replicas[0]!;
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' },
      { name: 'replica', host: replica.host, port: replica.port, role: 'replica' },
    ],
    'read_after_write_seconds = 0',
  );
  direct = await openDirect(db, [
    'CREATE DATABASE app',
    'CREATE TABLE app.log (a INT)',
    'CREATE TABLE app.cli_log (a INT)',
    'CREATE TABLE app.items (id INT PRIMARY KEY, n INT)',
    'INSERT INTO app.items VALUES (1, 10), (2, 20)',
    'CREATE SEQUENCE app.seq',
  ]);
});

afterAll(async () => {
  await closeDirect(direct);
  await edge?.stop();
  await db?.destroy();
});

async function primaryRows(sql: string): Promise<RowDataPacket[]> {
  const [rows] = await direct.primary.query<RowDataPacket[]>(sql);
  return rows;
}

/** Runs a script through the mariadb CLI's standard input (as `mariadb < file.sql`); resolves with stdout. */
function cliScript(port: number, script: string): Promise<string> {
  const args = ['--ssl=0', '-h127.0.0.1', `-P${port}`, '-unative', '-pnative-secret', '--batch', '--skip-column-names', 'app'];
  return new Promise((resolve, reject) => {
    const child = spawn('mariadb', args, { timeout: 20_000 });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`mariadb exited with ${code}: ${err}`))));
    child.stdin.end(script);
  });
}

describe('compound statements', () => {
  it('creates and runs a procedure, function, trigger and event with BEGIN ... END bodies through mysql2', async () => {
    const c = await edge.connect({ database: 'app' });
    await c.query(`CREATE PROCEDURE add_rows(IN n INT)
      BEGIN
        DECLARE i INT DEFAULT 0;
        DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET i = -1;
        lbl: WHILE i < n DO
          INSERT INTO log VALUES (i);
          SET i = i + 1;
          IF i > 100 THEN LEAVE lbl; END IF;
        END WHILE lbl;
        CASE WHEN n > 2 THEN INSERT INTO log VALUES (100); ELSE INSERT INTO log VALUES (200); END CASE;
        REPEAT SET i = i - 1; UNTIL i <= 0 END REPEAT;
      END`);
    await c.query('CREATE FUNCTION twice(x INT) RETURNS INT DETERMINISTIC BEGIN DECLARE y INT; SET y = x * 2; RETURN y; END');
    await c.query('CREATE TRIGGER log_bi BEFORE INSERT ON log FOR EACH ROW BEGIN IF NEW.a < 0 THEN SET NEW.a = 1000; END IF; END');
    await c.query('CREATE EVENT ev ON SCHEDULE EVERY 1 DAY DISABLE DO BEGIN DELETE FROM log WHERE a > 5000; INSERT INTO log VALUES (7); END');
    await c.query('CALL add_rows(3)');
    await c.query('INSERT INTO log VALUES (-5)');
    const [[fn]] = await c.query<RowDataPacket[]>('SELECT twice(21) AS v');
    expect(fn?.['v']).toBe(42);
    await c.end();
    expect((await primaryRows('SELECT a FROM app.log ORDER BY a')).map((r) => r['a'])).toEqual([0, 1, 2, 100, 1000]);
    const routines = await primaryRows("SELECT ROUTINE_NAME AS n FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'app' ORDER BY 1");
    expect(routines.map((r) => r['n'])).toEqual(['add_rows', 'twice']);
    expect(await primaryRows("SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'app'")).toHaveLength(1);
    expect(await primaryRows("SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = 'app'")).toHaveLength(1);
  });

  it('runs BEGIN NOT ATOMIC ... END as one statement on the primary', async () => {
    const c = await edge.connect({ database: 'app' });
    const before = await counted('primary', 'primary');
    await c.query('BEGIN NOT ATOMIC DECLARE x INT DEFAULT 5000; INSERT INTO log VALUES (x); INSERT INTO log VALUES (x + 1); END');
    expect(await counted('primary', 'primary')).toBeGreaterThan(before);
    await c.end();
    expect((await primaryRows('SELECT a FROM app.log WHERE a >= 5000 ORDER BY a')).map((r) => r['a'])).toEqual([5000, 5001]);
  });

  it('takes the mariadb CLI\'s DELIMITER // scripts: procedure, trigger and anonymous block', async () => {
    const out = await cliScript(
      edge.rwPort,
      `DELIMITER //
CREATE PROCEDURE cli_proc(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    INSERT INTO cli_log VALUES (i);
    SET i = i + 1;
  END WHILE;
END //
CREATE TRIGGER cli_trg BEFORE INSERT ON cli_log FOR EACH ROW
BEGIN
  IF NEW.a > 1 THEN SET NEW.a = NEW.a * 10; END IF;
END//
BEGIN NOT ATOMIC
  DECLARE x INT DEFAULT 9;
  INSERT INTO cli_log VALUES (x);
END//
DELIMITER ;
CALL cli_proc(3);
SELECT 'done';
`,
    );
    expect(out).toBe('done');
    expect((await primaryRows('SELECT a FROM app.cli_log ORDER BY a')).map((r) => r['a'])).toEqual([0, 1, 20, 90]);
    expect(await primaryRows("SELECT 1 FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'app' AND ROUTINE_NAME = 'cli_proc'")).toHaveLength(1);
  });
});

describe('the read-only listener', () => {
  const refused = [
    'SELECT * FROM items FOR UPDATE',
    'SELECT * FROM items WHERE id = 1 LOCK IN SHARE MODE',
    'SELECT NEXTVAL(seq)',
    'SELECT SETVAL(seq, 500)',
    'SELECT NEXT VALUE FOR seq',
    'SET @v = NEXTVAL(seq)',
    'LOCK TABLES items READ',
    'HANDLER items OPEN',
    "XA START 'ro1'",
    "SELECT GET_LOCK('ro_lock', 0)",
    "DO GET_LOCK('ro_lock', 0)",
    "SELECT RELEASE_LOCK('ro_lock')",
    'SET SESSION sql_log_bin = 0',
    'CALL add_rows(1)',
    'CREATE PROCEDURE ro_proc() BEGIN SELECT 1; END',
    'BEGIN NOT ATOMIC INSERT INTO log VALUES (1); END',
  ];

  it('refuses locking reads, sequences, locks, HANDLER, XA and writes with 1290, and nothing reaches a server', async () => {
    const c = await edge.connect({ port: edge.roPort, database: 'app' });
    const replicaBefore = await counted('replica', 'replica');
    const primaryBefore = await counted('primary', 'primary');
    for (const sql of refused) {
      await expect(c.query(sql)).rejects.toMatchObject({ errno: 1290, sqlState: 'HY000', message: expect.stringMatching(/^The read-only listener runs only reads a replica may serve, not .+; use the read-write listener$/) });
    }
    expect(await counted('replica', 'replica')).toBe(replicaBefore);
    expect(await counted('primary', 'primary')).toBe(primaryBefore);
    await c.end();
    for (const server of [direct.primary, direct.replica]) {
      const [[seq]] = await server.query<RowDataPacket[]>('SELECT next_not_cached_value AS v FROM app.seq');
      expect(Number(seq?.['v'])).toBe(1);
      const [[lock]] = await server.query<RowDataPacket[]>("SELECT IS_USED_LOCK('ro_lock') AS holder");
      expect(lock?.['holder']).toBeNull();
      const [open] = await server.query<RowDataPacket[]>("SHOW OPEN TABLES FROM app WHERE In_use > 0");
      expect(open).toEqual([]);
    }
    expect(await primaryRows('SELECT 1 FROM information_schema.ROUTINES WHERE ROUTINE_NAME = \'ro_proc\'')).toEqual([]);
  });

  it('still serves plain reads from the replica, transactions and session settings', async () => {
    const c = await edge.connect({ port: edge.roPort, database: 'app' });
    const serverId = async (): Promise<number> => Number((await c.query<RowDataPacket[]>('SELECT @@server_id AS id'))[0][0]?.['id']);
    const replicaId = db.replicas[0]!.serverId;
    expect(await serverId()).toBe(replicaId);
    for (const sql of ['SET NAMES utf8mb4', 'SET autocommit = 1', 'USE app', "SET SESSION sql_mode = 'ANSI_QUOTES'", 'SET SESSION TRANSACTION READ ONLY', 'SET @x = 41']) await c.query(sql);
    const [[vars]] = await c.query<RowDataPacket[]>('SELECT @x + 1 AS x, @@sql_mode AS mode, @@server_id AS id');
    expect(vars).toEqual({ x: 42, mode: 'ANSI_QUOTES', id: replicaId });
    for (const begin of ['BEGIN', 'START TRANSACTION READ ONLY']) {
      await c.query(begin);
      const [[row]] = await c.query<RowDataPacket[]>('SELECT n, @@server_id AS id FROM items WHERE id = 2');
      expect(row).toEqual({ n: 20, id: replicaId });
      await c.query(begin === 'BEGIN' ? 'COMMIT' : 'ROLLBACK');
    }
    const [tables] = await c.query<RowDataPacket[]>('SHOW TABLES');
    expect(tables.length).toBeGreaterThanOrEqual(3);
    await c.end();
  });
});
