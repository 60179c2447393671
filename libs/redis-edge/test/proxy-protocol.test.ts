// PROXY protocol v2 from a load balancer in front of redis-edge ([proxy] proxy_protocol_from), in both
// modes, through ioredis: the header's client address is the session's in GET /sessions; a header from
// an unlisted peer and a listed peer without one are refused and counted, a plain client is served.
import { connect as netConnect } from 'node:net';
import Redis from 'ioredis';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { encodeProxyV2 } from '@dbproxy/runtime';
import { metricValue, startProxyFront, type ProxyFront } from '@dbproxy/runtime/testing';
import { startRedis, type RedisServer, type ReplicatedServers } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(120_000);

const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();

const LB = '127.0.0.2';
const CLIENT = '127.0.0.5';

let redis: ReplicatedServers<RedisServer>;

beforeAll(async () => {
  redis = await startRedis({ replicas: 0 });
});

afterAll(async () => {
  await redis?.destroy();
});

/** Sends `bytes` from `local` and resolves with what the edge answered before closing. */
function rawExchange(local: string, port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const got: Buffer[] = [];
    const s = netConnect({ host: '127.0.0.1', port, localAddress: local }, () => s.write(bytes));
    s.on('data', (c: Buffer) => got.push(c));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(got).toString()));
  });
}

describe.each(['command', 'connection'] as const)('%s mode', (mode) => {
  let edge: EdgeHarness;
  let front: ProxyFront;
  const headers = async (outcome: string) => metricValue(await edge.metrics(), 'dbproxy_proxy_protocol_headers_total', { service: 'redis-edge', outcome });

  beforeAll(async () => {
    edge = await startEdge({
      mode,
      backends: [{ name: 'r1', port: redis.primary.port, role: 'primary' }],
      extra: `[proxy]\nproxy_protocol_from = ["${LB}/32"]\nproxy_protocol_header_timeout_seconds = 1`,
    });
    front = await startProxyFront({ target: { host: '127.0.0.1', port: edge.rwPort }, bindAddress: LB, claimSource: CLIENT });
  });

  afterAll(async () => {
    await front?.close();
    await edge?.stop();
  });

  it('a client behind the balancer is the header\'s address in GET /sessions', async () => {
    const before = await headers('accepted');
    const client = new Redis({ host: '127.0.0.1', port: front.port, maxRetriesPerRequest: 0 });
    try {
      expect(await client.ping()).toBe('PONG');
      const listing = (await (await fetch(`${edge.admin}/sessions`)).json()) as { sessions: { client_address: string }[] };
      expect(listing.sessions.map((s) => s.client_address)).toContainEqual(expect.stringMatching(/^127\.0\.0\.5:\d+$/));
    } finally {
      client.disconnect();
    }
    expect(await headers('accepted')).toBe(before + 1);
    // command mode traces each command (connection mode relays bytes unread: no command spans)
    if (mode === 'command') {
      const spans = exporter.getFinishedSpans().filter((sp) => sp.kind === SpanKind.SERVER && sp.attributes['db.operation.name'] === 'PING');
      expect(spans.map((sp) => sp.attributes['client.address'])).toContain(CLIENT);
    }
  });

  it('refuses a header from an unlisted peer and a listed peer that sends none; a plain client is served', async () => {
    const header = encodeProxyV2({ source: { address: CLIENT, port: 1 }, destination: { address: '127.0.0.1', port: edge.rwPort } });
    const ping = Buffer.from('*1\r\n$4\r\nPING\r\n');
    const unlisted = await headers('unlisted');
    expect(await rawExchange('127.0.0.1', edge.rwPort, Buffer.concat([header, ping]))).toBe('');
    expect(await headers('unlisted')).toBe(unlisted + 1);

    const missing = await headers('missing');
    expect(await rawExchange(LB, edge.rwPort, ping)).toBe('');
    expect(await headers('missing')).toBe(missing + 1);

    const plain = new Redis({ host: '127.0.0.1', port: edge.rwPort, maxRetriesPerRequest: 0 });
    expect(await plain.ping()).toBe('PONG');
    plain.disconnect();
  });
});
