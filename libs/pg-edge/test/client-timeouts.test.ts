// Silent clients in both modes: proxy.client_read_timeout_seconds closes a client the backend waits
// for with PostgreSQL's own idle-timeout errors (57P05, 25P03 in a transaction), never one whose
// statement is running; connections that send nothing (or log in and then nothing) stop holding
// max_connections slots at the startup deadline (2 × postgres.connect_timeout_seconds, at least 10 s).
import { connect as tcpConnect, type Socket } from 'node:net';
import { Client, type DatabaseError } from 'pg';
import { decodeBackendMessage, PgFramer, type BackendMessage } from '@dbproxy/protocol-pg';
import { startPostgres, waitFor, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(90_000);

const READ_TIMEOUT_SECONDS = 2;
const MAX_CONNECTIONS = 3;
const LOGIN_DEADLINE_MS = 10_000;

let pg: ReplicatedServers<PostgresServer>;

beforeAll(async () => {
  pg = await startPostgres({ replicas: 0 });
  await requirePoolPassword(pg);
});

afterAll(async () => {
  await pg?.destroy();
});

/** A connected node-postgres client whose first 'error' event (the server's unsolicited FATAL) is kept. */
async function connected(port: number, user: string, password?: string): Promise<{ client: Client; fatal: Promise<DatabaseError> }> {
  const client = new Client({ host: '127.0.0.1', port, user, password, database: 'postgres' });
  const fatal = new Promise<DatabaseError>((resolve) => client.once('error', (err) => resolve(err as DatabaseError)));
  await client.connect();
  return { client, fatal };
}

/** A TCP connection that sends nothing: what it receives before the edge closes it. */
function silentConnection(port: number): { socket: Socket; received: Promise<BackendMessage[]> } {
  const socket = tcpConnect({ host: '127.0.0.1', port });
  const framer = new PgFramer({ phase: 'typed', peer: 'backend' });
  const messages: BackendMessage[] = [];
  socket.on('data', (chunk) => framer.push(chunk, (frame) => messages.push(decodeBackendMessage(frame))));
  const received = new Promise<BackendMessage[]>((resolve) => socket.once('close', () => resolve(messages)));
  socket.on('error', () => undefined);
  return { socket, received };
}

function describeMode(mode: 'transaction' | 'transparent'): void {
  describe(`${mode} mode`, () => {
    let edge: EdgeHarness;
    const user = mode === 'transaction' ? 'app' : 'postgres';
    const password = mode === 'transaction' ? 'app-secret' : undefined;

    beforeAll(async () => {
      const extra = mode === 'transaction' ? `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"` : '';
      edge = await startEdge(
        [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra }],
        `routing_mode = "${mode}"\nmax_connections = ${MAX_CONNECTIONS}\nconnect_timeout_seconds = 1`,
        mode === 'transaction' ? '[[users]]\nname = "app"\npassword = "app-secret"' : '',
        { proxy: `client_read_timeout_seconds = ${READ_TIMEOUT_SECONDS}` },
      );
    });

    afterAll(async () => {
      await edge?.stop();
    });

    it('closes an idle client after client_read_timeout_seconds with FATAL 57P05, as idle_session_timeout does', async () => {
      const { client, fatal } = await connected(edge.rwPort, user, password);
      const started = Date.now();
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      const err = await fatal;
      expect(err).toMatchObject({ code: '57P05', severity: 'FATAL' });
      expect(err.message).toBe(`terminating connection due to idle-session timeout (proxy.client_read_timeout_seconds = ${READ_TIMEOUT_SECONDS})`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(READ_TIMEOUT_SECONDS * 1000);
      await client.end().catch(() => undefined);
      expect(await edge.metrics()).toMatch(new RegExp(`dbproxy_pg_client_timeouts_total\\{[^}]*mode="${mode}"[^}]*kind="idle"[^}]*\\} [1-9]`));
    });

    if (mode === 'transparent')
      it('closes a client that logged in with SCRAM (its own bytes during the login) and then sent nothing', async () => {
        // the client's SCRAM messages are the login's: the backend's ReadyForQuery leaves it waiting for the client
        const { client, fatal } = await connected(edge.rwPort, POOL_USER, POOL_PASSWORD);
        const started = Date.now();
        const err = await Promise.race([fatal, new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), READ_TIMEOUT_SECONDS * 1000 + 5_000))]);
        expect(err).toMatchObject({ code: '57P05', severity: 'FATAL' });
        expect(Date.now() - started).toBeGreaterThanOrEqual(READ_TIMEOUT_SECONDS * 1000 - 100);
        await client.end().catch(() => undefined);
      });

    it('closes a client idle in an open transaction with FATAL 25P03', async () => {
      const { client, fatal } = await connected(edge.rwPort, user, password);
      await client.query('BEGIN');
      await client.query('SELECT 1');
      expect(await fatal).toMatchObject({ code: '25P03', severity: 'FATAL' });
      await client.end().catch(() => undefined);
    });

    it('never cuts a statement that runs longer than the timeout: the client is not the one being waited for', async () => {
      const { client } = await connected(edge.rwPort, user, password);
      const rows = (await client.query(`SELECT pg_sleep(${READ_TIMEOUT_SECONDS * 2}), 7 AS seven`)).rows;
      expect(rows).toEqual([{ pg_sleep: '', seven: 7 }]);
      await client.end();
    });

    it('frees max_connections slots held by connections that send nothing, with FATAL 08P01 at the startup deadline', async () => {
      const silent = Array.from({ length: MAX_CONNECTIONS }, () => silentConnection(edge.rwPort));
      const opened = Date.now();
      await Promise.all(silent.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await expect(connected(edge.rwPort, user, password)).rejects.toMatchObject({ code: '53300' });
      const received = await Promise.all(silent.map((s) => s.received));
      const elapsed = Date.now() - opened;
      for (const messages of received) expect(messages).toEqual([expect.objectContaining({ type: 'ErrorResponse', severity: 'FATAL', code: '08P01' })]);
      expect(elapsed).toBeGreaterThanOrEqual(LOGIN_DEADLINE_MS - 500);
      expect(elapsed).toBeLessThan(LOGIN_DEADLINE_MS + 5000);
      // the edge frees a slot when it sees the socket close, a moment after the client saw it
      const { client } = await waitFor(() => connected(edge.rwPort, user, password).catch(() => false as const), { timeoutMs: 2_000, intervalMs: 50, description: 'a slot freed' });
      expect((await client.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
      await client.end();
    });
  });
}

describeMode('transaction');
describeMode('transparent');
