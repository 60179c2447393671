// PROXY protocol v2 on a passthrough login ([mysql] auth = "passthrough"): the session's own backend
// connection opens with the client's header, so an account MariaDB allows only from the client's host
// (127.0.0.5, behind a load balancer on 127.0.0.2) logs in, and the same account straight from
// 127.0.0.1 gets the server's own 1045.
import { connect as netConnect, type Socket } from 'node:net';
import { startProxyFront, type ProxyFront } from '@dbproxy/runtime/testing';
import { startMariaDb } from '@dbproxy/testing';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

const LB = '127.0.0.2';
const CLIENT = '127.0.0.5';
const ACCOUNT = { user: 'pp_alice', password: 'pp-alice-pw' };

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let front: ProxyFront;

const fromAddress = (local: string, port: number): Socket => netConnect({ host: '127.0.0.1', port, localAddress: local });

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0, settings: { 'proxy-protocol-networks': '127.0.0.0/8' } });
  const root = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await root.query(`CREATE USER '${ACCOUNT.user}'@'${CLIENT}' IDENTIFIED BY '${ACCOUNT.password}'`);
  await root.end();
  edge = await startEdge(
    [{ name: 'db1', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'proxy_protocol = true' }],
    'auth = "passthrough"',
    '',
    '',
    `proxy_protocol_from = ["${LB}/32"]`,
  );
  front = await startProxyFront({ target: { host: '127.0.0.1', port: edge.rwPort }, bindAddress: LB });
});

afterAll(async () => {
  await front?.close();
  await edge?.stop();
  await db?.destroy();
});

it("a passthrough login behind the balancer reaches MariaDB as the client's host", async () => {
  const c = await createConnection({ stream: () => fromAddress(CLIENT, front.port), ...ACCOUNT });
  try {
    const [rows] = await c.query<RowDataPacket[]>('SELECT USER() AS u');
    expect(rows[0]?.['u']).toBe(`${ACCOUNT.user}@${CLIENT}`);
  } finally {
    await c.end();
  }
});

it("the same account from the edge's own host is refused by the server (1045)", async () => {
  await expect(createConnection({ host: '127.0.0.1', port: edge.rwPort, ...ACCOUNT })).rejects.toMatchObject({ errno: 1045 });
});
