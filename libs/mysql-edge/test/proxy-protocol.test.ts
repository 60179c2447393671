// PROXY protocol v2 end to end against a real MariaDB started with proxy_protocol_networks: a client
// connecting from 127.0.0.5 through a load balancer on 127.0.0.2 (the only network in
// proxy_protocol_from) appears as 127.0.0.5 in the server's USER() and processlist, in a plain and in
// a pinned (transaction) session, in its spans' client.address and in GET /sessions; a header from an unlisted peer, a listed peer
// without one and a malformed one are refused and counted.
import { connect as netConnect, type Socket } from 'node:net';
import { encodeProxyV2, encodeProxyV2Local } from '@dbproxy/runtime';
import { metricValue, startProxyFront, type ProxyFront } from '@dbproxy/runtime/testing';
import { startMariaDb } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { APP_USER, startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let front: ProxyFront;

const LB = '127.0.0.2';
const CLIENT = '127.0.0.5';

async function one(c: Connection, sql: string): Promise<string> {
  const [rows] = await c.query<RowDataPacket[]>(sql);
  return String(Object.values(rows[0] ?? {})[0]);
}

const headerCount = async (outcome: string) => metricValue(await edge.metrics(), 'dbproxy_proxy_protocol_headers_total', { service: 'mysql-edge', outcome });

/** Opens a raw socket to the edge from `from`, sends `bytes`, and resolves when the edge closes it (with what it sent). */
function rawExchange(from: string, bytes: Buffer | null, port = edge.rwPort): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const got: Buffer[] = [];
    const s: Socket = netConnect({ host: '127.0.0.1', port, localAddress: from }, () => {
      if (bytes) s.write(bytes);
    });
    s.on('data', (c: Buffer) => {
      got.push(c);
      // after the greeting, an unlisted peer sends its header (a balancer that was not declared)
      if (got.length === 1 && bytes === null) s.write(encodeProxyV2({ source: { address: CLIENT, port: 1 }, destination: { address: '127.0.0.1', port } }));
    });
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(got)));
  });
}

/** mysql2's socket, connected from `local` (mysql2 does not bind its own). */
const fromAddress = (local: string, port: number): Socket => netConnect({ host: '127.0.0.1', port, localAddress: local });

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0, settings: { 'proxy-protocol-networks': '127.0.0.0/8' } });
  // root is only root@localhost: the pool's account must be allowed from the clients' hosts
  const root = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await root.query(`CREATE USER 'pool'@'%' IDENTIFIED BY 'pool-pw'`);
  await root.query(`GRANT ALL ON *.* TO 'pool'@'%'`);
  await root.end();
  edge = await startEdge(
    [{ name: 'db1', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'proxy_protocol = true\nusername = "pool"\npassword = "pool-pw"' }],
    '',
    '',
    '',
    `proxy_protocol_from = ["${LB}/32"]\nproxy_protocol_header_timeout_seconds = 1`,
  );
  front = await startProxyFront({ target: { host: '127.0.0.1', port: edge.rwPort }, bindAddress: LB });
});

afterAll(async () => {
  await front?.close();
  await edge?.stop();
  await db?.destroy();
});

it('a client behind the balancer is the header\'s address to MariaDB, plain and pinned, and in GET /sessions', async () => {
  const before = await headerCount('accepted');
  const c = await createConnection({ stream: () => fromAddress(CLIENT, front.port), ...APP_USER });
  try {
    expect(await one(c, 'SELECT USER()')).toBe(`pool@${CLIENT}`);
    await c.query('BEGIN');
    expect(await one(c, 'SELECT host FROM information_schema.processlist WHERE id = CONNECTION_ID()')).toMatch(new RegExp(`^${CLIENT.replaceAll('.', '\\.')}:\\d+$`));
    expect(await one(c, 'SELECT USER()')).toBe(`pool@${CLIENT}`);
    await c.query('COMMIT');
    const spans = exporter.getFinishedSpans().filter((sp) => sp.kind === SpanKind.SERVER && sp.attributes['db.operation.name'] === 'COMMIT');
    expect(spans.map((sp) => sp.attributes['client.address'])).toContain(CLIENT);
    const sessions = (await (await fetch(`${edge.admin}/sessions`)).json()) as { sessions: { client_address: string }[] };
    expect(sessions.sessions.map((s) => s.client_address)).toContainEqual(expect.stringMatching(new RegExp(`^${CLIENT.replaceAll('.', '\\.')}:`)));
  } finally {
    await c.end();
  }
  expect(await headerCount('accepted')).toBe(before + 1);
});

it('a client straight to the edge (no header, not a listed network) is the socket\'s address; pooled connections do not mix the two', async () => {
  const c = await edge.connect();
  try {
    expect(await one(c, 'SELECT USER()')).toBe('pool@127.0.0.1');
  } finally {
    await c.end();
  }
});

it('refuses a header from a peer outside proxy_protocol_from', async () => {
  const before = await headerCount('unlisted');
  await rawExchange('127.0.0.1', null);
  expect(await headerCount('unlisted')).toBe(before + 1);
});

it('refuses a listed peer that sends no header (timeout), bytes that are no header, and a malformed header', async () => {
  const timeouts = await headerCount('timeout');
  await expect(createConnection({ stream: () => fromAddress(LB, edge.rwPort), ...APP_USER, connectTimeout: 5_000 })).rejects.toThrow();
  expect(await headerCount('timeout')).toBe(timeouts + 1);

  const missing = await headerCount('missing');
  expect((await rawExchange(LB, Buffer.from('GET / HTTP/1.0\r\n\r\n'))).length).toBe(0);
  expect(await headerCount('missing')).toBe(missing + 1);

  const malformed = await headerCount('malformed');
  const bad = Buffer.from(encodeProxyV2({ source: { address: CLIENT, port: 1 }, destination: { address: '127.0.0.1', port: 2 } }));
  bad[12] = 0x31; // version 3
  expect((await rawExchange(LB, bad)).length).toBe(0);
  expect(await headerCount('malformed')).toBe(malformed + 1);
});

it('a LOCAL header from the balancer (its own health check) keeps the balancer\'s address', async () => {
  const local = await startProxyFront({ target: { host: '127.0.0.1', port: edge.rwPort }, bindAddress: LB, header: encodeProxyV2Local() });
  const c = await createConnection({ host: '127.0.0.1', port: local.port, ...APP_USER });
  try {
    const sessions = (await (await fetch(`${edge.admin}/sessions`)).json()) as { sessions: { client_address: string }[] };
    expect(sessions.sessions.map((s) => s.client_address)).toContainEqual(expect.stringMatching(/^127\.0\.0\.2:/));
  } finally {
    await c.end();
    await local.close();
  }
});
