// An OTLP/HTTP JSON receiver for tests: collects every span POSTed to /v1/traces.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
export interface ReceivedSpan {
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  /** Nanoseconds since the epoch, as OTLP/JSON writes them (decimal strings). */
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly status?: { code?: number; message?: string };
  readonly attributes: Record<string, string | number | boolean>;
  readonly service: string;
}

/** OTLP span kinds (SPAN_KIND_*). */
export const Kind = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;

const valueOf = (v: OtlpValue): string | number | boolean => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));

export interface OtlpReceiver {
  readonly url: string;
  readonly spans: ReceivedSpan[];
  close(): Promise<void>;
}

interface Export {
  resourceSpans?: { resource?: { attributes?: { key: string; value: OtlpValue }[] }; scopeSpans?: { spans?: (Omit<ReceivedSpan, 'attributes' | 'service'> & { attributes?: { key: string; value: OtlpValue }[] })[] }[] }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Export;
        for (const rs of body.resourceSpans ?? []) {
          const service = String(valueOf(rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value ?? {}));
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) spans.push({ ...s, service, attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, valueOf(a.value)])) });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/traces`, spans, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** An indented list of the span tree under `root`: name, kind and the attributes named. */
export function renderTree(spans: readonly ReceivedSpan[], root: ReceivedSpan, keys: readonly string[], depth = 0): string {
  const kind = Object.entries(Kind).find(([, k]) => k === root.kind)?.[0] ?? String(root.kind);
  const attrs = keys.filter((k) => root.attributes[k] !== undefined).map((k) => `${k}=${String(root.attributes[k])}`);
  const status = root.status?.code === 2 ? ' ERROR' : '';
  const ids = depth === 0 ? `trace=${root.traceId} span=${root.spanId} parent=${root.parentSpanId || '-'}` : `span=${root.spanId} parent=${root.parentSpanId ?? '-'}`;
  const line = `${'  '.repeat(depth)}- ${root.name} [${kind}${status}] ${ids} ${attrs.join(' ')}`;
  const children = spans.filter((s) => s.parentSpanId === root.spanId && s.traceId === root.traceId);
  return [line, ...children.map((c) => renderTree(spans, c, keys, depth + 1))].join('\n');
}
