// KILL through mysql-edge against real MariaDB: edge connection ids are not backend thread ids;
// KILL QUERY / KILL CONNECTION of one's own sessions are served by the edge (the running statement
// stopped with a KILL of its backend thread over a connection of its own), anyone else's id — an
// other user's session, a backend thread — gets 1095 and nothing is killed; the mariadb CLI's
// Ctrl-C and a mysql2 timeout followed by KILL QUERY (knex's cancelOnTimeout) work; with worker
// processes a KILL reaches the worker that owns the session.
import { spawn } from 'node:child_process';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, startMariaDb, startNats, tmpDir, waitFor, type NatsServer, type TempDir } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { metricValue, startEdge, type EdgeHarness } from './harness';
import { RawClient } from './raw-client';

jest.setTimeout(120_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let root: Connection;
const open: Connection[] = [];

async function client(user: 'app' | 'native' = 'app'): Promise<Connection> {
  const c = await edge.connect(user === 'native' ? { user: 'native', password: 'native-secret' } : {});
  open.push(c);
  return c;
}

/** The backend thread running a statement that starts with `prefix` (seen by root on the server). */
async function backendThread(prefix: string): Promise<number> {
  return waitFor(async () => {
    const [rows] = await root.query<RowDataPacket[]>('SELECT id FROM information_schema.processlist WHERE info LIKE ?', [`${prefix}%`]);
    return rows[0] ? Number(rows[0]['id']) : false;
  }, { description: `a backend thread running ${prefix}` });
}

/** The edge closed `c`: its queries fail (once the close has reached the client). */
async function closedByEdge(c: Connection): Promise<void> {
  await waitFor(async () => c.query('SELECT 1').then(() => false, () => true), { description: 'the session closed', timeoutMs: 3_000 });
}

async function threadAlive(id: number): Promise<boolean> {
  const [rows] = await root.query<RowDataPacket[]>('SELECT id FROM information_schema.processlist WHERE id = ?', [id]);
  return rows.length === 1;
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  edge = await startEdge([{ name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary' }], 'query_timeout_seconds = 60\npool_max_per_backend = 4');
  root = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
});

afterEach(() => {
  for (const c of open.splice(0)) c.destroy();
});

afterAll(async () => {
  await root?.end();
  await edge?.stop();
  await db?.destroy();
});

it('hands out connection ids in the edge range, distinct from the backend thread ids', async () => {
  const a = await client();
  const b = await client();
  expect(a.threadId).toBeGreaterThanOrEqual(2 ** 30);
  expect(a.threadId).toBeLessThan(2 ** 31);
  expect(b.threadId).not.toBe(a.threadId);
  const [[row]] = await a.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
  expect(Number(row?.['id'])).toBeLessThan(2 ** 30); // the backend thread the statement ran on (README)
});

it('KILL QUERY <edge id> from another session of the same user ends the query with 1317 quickly', async () => {
  const a = await client();
  const b = await client();
  const running = a.query('SELECT SLEEP(10) AS slept_a');
  const thread = await backendThread('SELECT SLEEP(10) AS slept_a');
  const started = Date.now();
  const [ok] = await b.query(`KILL QUERY ${a.threadId}`);
  expect(ok).toMatchObject({ affectedRows: 0 });
  await expect(running).rejects.toMatchObject({ errno: 1317, sqlState: '70100' });
  expect(Date.now() - started).toBeLessThan(3_000);
  // the killed connection never serves another client: it was closed, A goes on on another one
  await waitFor(async () => !(await threadAlive(thread)) || null, { timeoutMs: 3_000 });
  const [[row]] = await a.query<RowDataPacket[]>('SELECT 7 AS v');
  expect(row?.['v']).toBe(7);
});

it('KILL from another user gets 1095 and the session goes on', async () => {
  const a = await client();
  const other = await client('native');
  const running = a.query('SELECT SLEEP(1.5) AS slept_b');
  await backendThread('SELECT SLEEP(1.5) AS slept_b');
  const denied = async () => metricValue(await edge.metrics(), 'dbproxy_mysql_kills_total', { scope: 'query', outcome: 'denied' });
  const deniedBefore = await denied();
  await expect(other.query(`KILL QUERY ${a.threadId}`)).rejects.toMatchObject({ errno: 1095, message: `You are not owner of thread ${a.threadId}` });
  expect((await denied()) - deniedBefore).toBe(1);
  await expect(other.query(`KILL ${a.threadId}`)).rejects.toMatchObject({ errno: 1095 });
  const [[row]] = (await running) as unknown as [RowDataPacket[]];
  expect(Number(row?.['slept_b'])).toBe(0);
});

it('refuses a KILL of a backend thread id: the thread survives', async () => {
  const a = await client();
  const b = await client();
  const running = a.query('SELECT SLEEP(1.5) AS slept_c');
  const thread = await backendThread('SELECT SLEEP(1.5) AS slept_c');
  await expect(b.query(`KILL QUERY ${thread}`)).rejects.toMatchObject({ errno: 1095, message: `You are not owner of thread ${thread}` });
  await expect(b.query(`KILL /*!50000 CONNECTION */ ${thread}`)).rejects.toMatchObject({ errno: 1095 });
  await expect(b.query(`KILL HARD ${thread}`)).rejects.toMatchObject({ errno: 1095 });
  expect(await threadAlive(thread)).toBe(true);
  const [[row]] = (await running) as unknown as [RowDataPacket[]];
  expect(Number(row?.['slept_c'])).toBe(0);
});

it('KILL CONNECTION <edge id> closes that session and ends its backend thread', async () => {
  const a = await client();
  const b = await client();
  const running = a.query('SELECT SLEEP(10) AS slept_d');
  const thread = await backendThread('SELECT SLEEP(10) AS slept_d');
  await b.query(`KILL SOFT CONNECTION ${a.threadId}`);
  await expect(running).rejects.toMatchObject({ errno: 1927 });
  await closedByEdge(a);
  await waitFor(async () => !(await threadAlive(thread)) || null, { description: 'the killed backend thread gone', timeoutMs: 3_000 });
  // an idle session: closed as well
  const idle = await client();
  await b.query(`KILL ${idle.threadId}`);
  await closedByEdge(idle);
});

it('KILL QUERY of an idle session is OK and kills nothing; KILL CONNECTION of its own id ends the session', async () => {
  const a = await client();
  const b = await client();
  await b.query(`KILL QUERY ${a.threadId}`);
  const [[row]] = await a.query<RowDataPacket[]>('SELECT 8 AS v');
  expect(row?.['v']).toBe(8);
  await b.query(`KILL QUERY ${b.threadId}`);
  await expect(b.query(`KILL CONNECTION ${b.threadId}`)).rejects.toMatchObject({ errno: 1927 });
});

it('refuses KILL QUERY ID, KILL USER, expressions, KILL in a prepared statement and unknown ids', async () => {
  const b = await client();
  await expect(b.query('KILL QUERY ID 5')).rejects.toMatchObject({ errno: 1235, message: expect.stringContaining('KILL QUERY ID is not supported') });
  await expect(b.query('KILL USER app')).rejects.toMatchObject({ errno: 1235, message: expect.stringContaining('KILL USER') });
  await expect(b.query('KILL (SELECT 5)')).rejects.toMatchObject({ errno: 1235 });
  await expect(b.execute('KILL 5')).rejects.toMatchObject({ errno: 1295 });
  await expect(b.query(`KILL ${2 ** 30 + 12345}`)).rejects.toMatchObject({ errno: 1095 });
  const [[row]] = await b.query<RowDataPacket[]>('SELECT 9 AS v');
  expect(row?.['v']).toBe(9);
});

it('COM_PROCESS_KILL (the old mysql_kill()) is KILL CONNECTION, with the same ownership rule', async () => {
  const a = await client();
  const raw = await RawClient.login(edge.rwPort, 'app', 'app-secret');
  const processKill = (id: number) => {
    const payload = Buffer.alloc(5);
    payload[0] = 0x0c;
    payload.writeUInt32LE(id, 1);
    return payload;
  };
  const running = a.query('SELECT SLEEP(1.5) AS slept_g');
  const thread = await backendThread('SELECT SLEEP(1.5) AS slept_g');
  expect(await raw.error(processKill(thread))).toMatchObject({ code: 1095 });
  await running;
  expect((await raw.command(processKill(a.threadId))).summary.err).toBeNull();
  await closedByEdge(a);
  raw.end();
});

it('mysql2 timeout, then KILL QUERY of its threadId on a new connection (knex cancelOnTimeout) stops the statement on the backend', async () => {
  const a = await client();
  await expect(a.query({ sql: 'SELECT SLEEP(10) AS slept_e', timeout: 300 })).rejects.toMatchObject({ code: 'PROTOCOL_SEQUENCE_TIMEOUT' });
  const thread = await backendThread('SELECT SLEEP(10) AS slept_e');
  const killer = await client();
  await killer.query(`KILL QUERY ${a.threadId}`);
  await waitFor(async () => !(await threadAlive(thread)) || null, { description: 'the statement stopped on the backend', timeoutMs: 3_000 });
});

it('the mariadb CLI Ctrl-C (KILL QUERY on a new connection) interrupts its query', async () => {
  const cli = spawn('mariadb', ['--ssl=0', '-h', '127.0.0.1', '-P', String(edge.rwPort), '-u', 'app', '-papp-secret', '-e', 'SELECT SLEEP(20) AS slept_f'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  cli.stdout.on('data', (d: Buffer) => (output += d.toString()));
  cli.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => cli.once('exit', (code) => resolve(code)));
  const thread = await backendThread('SELECT SLEEP(20) AS slept_f');
  const started = Date.now();
  cli.kill('SIGINT');
  await exited;
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(output).toMatch(/ERROR 1317 .*Query execution was interrupted/);
  await waitFor(async () => !(await threadAlive(thread)) || null, { description: 'the CLI statement stopped on the backend', timeoutMs: 3_000 });
});

describe('worker processes', () => {
  // ./bin/dbproxy with two workers over NATS (needs `npm run build`): each worker claims its own id
  // slot, and a KILL that lands on one worker for a session of the other is routed to it
  let nats: NatsServer;
  let dir: TempDir;
  let proxy: DbproxyProcess | undefined;
  let rw = 0;
  beforeAll(async () => {
    nats = await startNats();
    dir = await tmpDir('mysql-edge-kill');
    const [admin, ro] = [await freePort(), await freePort()];
    rw = await freePort();
    const toml = `[bus]\nnats_url = "${nats.url}"\n[telemetry]\nlog_level = "warn"\n[proxy.admin]\nlisten = "127.0.0.1:${admin}"
[[users]]\nname = "app"\npassword = "app-secret"\n[[users]]\nname = "other"\npassword = "other-secret"
[health]\ninterval_seconds = 1\ntimeout_seconds = 1\nfailures_before_down = 1\nsuccesses_before_up = 1
[mysql]\nenabled = true\nworkers = 2\nread_write_listen = "127.0.0.1:${rw}"\nread_only_listen = "127.0.0.1:${ro}"
[postgres]\nenabled = false\n[redis]\nenabled = false
[[mysql_backends]]\nname = "primary"\naddress = "127.0.0.1:${db.primary.port}"\nrole = "primary"\n`;
    proxy = startDbproxy(['start', 'mysql-edge', 'topology', '--config', writeConfig(dir.path, 'kill-workers.toml', toml)]);
    await waitForHttp(`http://127.0.0.1:${admin}/readyz`, 200, 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${proxy?.output()}`);
    });
  });
  afterAll(async () => {
    if (proxy) expect(await proxy.stop()).toBe(0);
    nats?.destroy();
    await dir?.remove();
  });

  const connect = async (user = 'app', password = 'app-secret') => {
    const c = await createConnection({ host: '127.0.0.1', port: rw, user, password });
    open.push(c);
    return c;
  };
  const slotOf = (id: number) => (id - 2 ** 30) >>> 20;

  it('routes KILL QUERY and KILL CONNECTION to the worker owning the session; other users still get 1095', async () => {
    const a = await connect();
    const b = await connect(); // the other worker (least loaded)
    expect(slotOf(a.threadId)).not.toBe(slotOf(b.threadId));
    const running = a.query('SELECT SLEEP(10) AS slept_w');
    await backendThread('SELECT SLEEP(10) AS slept_w');
    const other = await connect('other', 'other-secret');
    await expect(other.query(`KILL QUERY ${a.threadId}`)).rejects.toMatchObject({ errno: 1095 });
    const started = Date.now();
    await b.query(`KILL QUERY ${a.threadId}`);
    await expect(running).rejects.toMatchObject({ errno: 1317 });
    expect(Date.now() - started).toBeLessThan(3_000);
    const [[row]] = await a.query<RowDataPacket[]>('SELECT 5 AS v');
    expect(row?.['v']).toBe(5);
    await b.query(`KILL CONNECTION ${a.threadId}`);
    await closedByEdge(a);
  });
});
