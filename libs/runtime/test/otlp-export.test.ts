// Traces leave the process over OTLP/HTTP: a dbproxy process configured with `[telemetry]
// otlp_endpoint` pointing at a real HTTP receiver POSTs the spans its service made (on admin
// requests carrying a W3C `traceparent`) to /v1/traces, at the latest when SIGTERM drains it.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort, tmpDir, type TempDir } from '@dbproxy/testing';
import { waitForHttp, writeConfig } from '../src/testing';

jest.setTimeout(60_000);

interface Received {
  readonly method: string;
  readonly url: string;
  readonly contentType: string;
  readonly body: string;
}

/** An OTLP/HTTP receiver: records every request and answers 200 with an empty export response. */
async function startReceiver(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/v1/traces`, received };
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string };
}
interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: OtlpAttribute[];
}
interface OtlpExport {
  resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}
interface TracedAnswer {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

describe('OTLP/HTTP trace export', () => {
  let dir: TempDir;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    dir = await tmpDir('otlp');
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await new Promise((resolve) => receiver.server.close(resolve));
    await dir.remove();
  });

  it('POSTs OTLP JSON to the configured endpoint with the service name, continuing a sampled client trace', async () => {
    const admin = await freePort();
    // ratio 0: only spans whose caller sampled the trace are recorded (parent-based sampling)
    const config = writeConfig(dir.path, 'otlp.toml', `[telemetry]\nlog_level = "warn"\notlp_endpoint = "${receiver.url}"\nsample_ratio = 0\n[proxy.admin]\ntopology = "127.0.0.1:${admin}"\n`);
    const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'traced-service.js'), '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitForHttp(`http://127.0.0.1:${admin}/readyz`).catch((err) => {
        throw new Error(`${String(err)}\n${output}`);
      });
      const traced = async (headers: Record<string, string>) => (await (await fetch(`http://127.0.0.1:${admin}/traced`, { headers })).json()) as TracedAnswer;
      const continued = await traced({ traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, 'x-caller': 'client' });
      const root = await traced({ 'x-caller': 'nobody' });
      expect(continued).toEqual(expect.objectContaining({ traceId: CLIENT_TRACE, sampled: true }));
      expect(root.sampled).toBe(false);

      // the drain flushes the batch processor before the process exits
      child.kill('SIGTERM');
      expect(await exited).toBe(0);

      const posts = receiver.received.filter((r) => r.method === 'POST' && r.url === '/v1/traces');
      expect(posts.length).toBeGreaterThanOrEqual(1);
      for (const post of posts) expect(post.contentType).toMatch(/^application\/json/);
      expect(posts.map((p) => p.body).join('')).toContain('"admin.traced"');
      const resourceSpans = posts.flatMap((p) => (JSON.parse(p.body) as OtlpExport).resourceSpans);
      const spans = resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ span, resource: rs.resource.attributes }))));
      expect(spans.map((s) => s.span)).toEqual([
        expect.objectContaining({
          name: 'admin.traced',
          traceId: CLIENT_TRACE,
          spanId: continued.spanId,
          parentSpanId: CLIENT_SPAN,
          attributes: [{ key: 'test.caller', value: { stringValue: 'client' } }],
        }),
      ]);
      expect(spans[0]?.resource).toEqual(
        expect.arrayContaining([
          { key: 'service.name', value: { stringValue: 'topology' } },
          { key: 'service.namespace', value: { stringValue: 'dbproxy' } },
        ]),
      );
    } finally {
      child.kill('SIGKILL');
    }
  });
});
