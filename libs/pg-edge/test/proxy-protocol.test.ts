// PROXY protocol v2 from a load balancer in front of pg-edge ([proxy] proxy_protocol_from), in both
// routing modes, through node-postgres: the header's client address is the session's in GET /sessions;
// a header from an unlisted peer and a listed peer without one are refused and counted.
import { Socket } from 'node:net';
import { Client } from 'pg';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { encodeProxyV2 } from '@dbproxy/runtime';
import { metricValue, startProxyFront, type ProxyFront } from '@dbproxy/runtime/testing';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();

const LB = '127.0.0.2';
const CLIENT = '127.0.0.5';
const USERS = '[[users]]\nname = "app"\npassword = "app-secret"';

let pg: ReplicatedServers<PostgresServer>;

beforeAll(async () => {
  pg = await startPostgres({ replicas: 0 });
  await requirePoolPassword(pg);
});

afterAll(async () => {
  await pg?.destroy();
});

/** A node-postgres socket connected from `local` (node-postgres does not bind its own). */
function boundStream(local: string): () => Socket {
  return () => {
    const socket = new Socket();
    const connect = socket.connect.bind(socket) as (o: object) => Socket;
    socket.connect = ((port: number, host: string) => connect({ port, host, localAddress: local })) as typeof socket.connect;
    return socket;
  };
}

describe.each([
  ['transaction', 'app', 'app-secret'],
  ['transparent', 'postgres', undefined],
] as const)('%s mode', (mode, user, password) => {
  let edge: EdgeHarness;
  let front: ProxyFront;
  const headers = async (outcome: string) => metricValue(await edge.metrics(), 'dbproxy_proxy_protocol_headers_total', { service: 'pg-edge', outcome });

  beforeAll(async () => {
    const backend = `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"`;
    edge = await startEdge([{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra: backend }], `routing_mode = "${mode}"`, USERS, {
      proxy: `proxy_protocol_from = ["${LB}/32"]\nproxy_protocol_header_timeout_seconds = 1`,
    });
    front = await startProxyFront({ target: { host: '127.0.0.1', port: edge.rwPort }, bindAddress: LB, claimSource: CLIENT });
  });

  afterAll(async () => {
    await front?.close();
    await edge?.stop();
  });

  it('a client behind the balancer is the header\'s address in GET /sessions', async () => {
    const before = await headers('accepted');
    const client = new Client({ host: '127.0.0.1', port: front.port, user, password, database: 'postgres' });
    await client.connect();
    try {
      expect((await client.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
      const listing = (await (await fetch(`${edge.admin}/sessions`)).json()) as { sessions: { client_address: string }[] };
      expect(listing.sessions.map((s) => s.client_address)).toContainEqual(expect.stringMatching(/^127\.0\.0\.5:\d+$/));
    } finally {
      await client.end();
    }
    // transaction mode traces each unit (transparent mode relays bytes unread: no statement spans)
    if (mode === 'transaction') {
      const spans = exporter.getFinishedSpans().filter((sp) => sp.kind === SpanKind.SERVER && sp.attributes['db.query.text'] === 'SELECT ? AS one');
      expect(spans.map((sp) => sp.attributes['client.address'])).toContain(CLIENT);
    }
    expect(await headers('accepted')).toBe(before + 1);
  });

  it('refuses a header from an unlisted peer and a listed peer that sends none', async () => {
    const unlisted = await headers('unlisted');
    const direct = new Client({ host: '127.0.0.1', port: edge.rwPort, user, password, database: 'postgres', stream: () => {
      const s = boundStream('127.0.0.1')();
      s.once('connect', () => s.write(encodeProxyV2({ source: { address: CLIENT, port: 1 }, destination: { address: '127.0.0.1', port: edge.rwPort } })));
      return s;
    } });
    await expect(direct.connect()).rejects.toThrow();
    expect(await headers('unlisted')).toBe(unlisted + 1);

    const missing = await headers('missing');
    const fromLb = new Client({ host: '127.0.0.1', port: edge.rwPort, user, password, database: 'postgres', stream: boundStream(LB) });
    await expect(fromLb.connect()).rejects.toThrow();
    expect(await headers('missing')).toBe(missing + 1);

    // a client not behind the balancer, without a header, is served as before
    const plain = new Client({ host: '127.0.0.1', port: edge.rwPort, user, password, database: 'postgres' });
    await plain.connect();
    expect((await plain.query('SELECT 2 AS two')).rows[0]).toEqual({ two: 2 });
    await plain.end();
  });
});
