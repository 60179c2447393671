// The PROXY protocol on the edges' listeners ([proxy] proxy_protocol_from): a connection from a listed
// load balancer must open with a header, which then stands for the socket's addresses everywhere
// (logs, spans, session listings, the header sent on to backends); a header from anyone else is refused.
import { BlockList, isIPv4, type Socket } from 'node:net';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { Logger, MetricsRegistry } from '@dbproxy/observability';
import { ProxyHeaderDecoder, looksLikeProxyHeader, type ProxyHeader } from './decode';
import { unmapIPv4 } from './encode';
import { presentAs } from './client-address';

const OUTCOMES = ['accepted', 'missing', 'malformed', 'timeout', 'unlisted'] as const;
type Outcome = (typeof OUTCOMES)[number];

export interface ProxyProtocolSettings {
  readonly from: readonly string[];
  readonly headerTimeoutMs: number;
  readonly maxHeaderBytes: number;
  readonly acceptV1: boolean;
}

export function proxyProtocolSettings(c: DeepReadonly<DbproxyConfig>): ProxyProtocolSettings {
  const p = c.proxy;
  return { from: p.proxy_protocol_from, headerTimeoutMs: p.proxy_protocol_header_timeout_seconds * 1000, maxHeaderBytes: p.proxy_protocol_max_header_bytes, acceptV1: p.proxy_protocol_accept_v1 };
}

function networksOf(from: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of from) {
    const [ip = '', bits] = entry.split('/');
    const type = isIPv4(ip) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return list;
}

/** Whether `address` (an IPv4-mapped IPv6 one as its IPv4 form) is in one of the networks. */
function listed(list: BlockList, address: string): boolean {
  const ip = unmapIPv4(address);
  return list.check(ip, isIPv4(ip) ? 'ipv4' : 'ipv6');
}

/** Reads the header of each connection of one service's listeners before the edge sees the connection. */
export class InboundProxyGate {
  private networks: { key: string; list: BlockList } | undefined;

  constructor(
    private readonly service: string,
    private readonly settings: () => ProxyProtocolSettings,
    private readonly logger: Logger,
    private readonly metrics: MetricsRegistry,
  ) {}

  private readonly headers = () => this.metrics.counter({ name: 'dbproxy_proxy_protocol_headers_total', help: 'PROXY protocol headers read from load balancers, by outcome (accepted; refused: missing, malformed, timeout, unlisted)', labelNames: ['service', 'listener', 'outcome'] });

  /** The zero series of a listener. */
  register(listener: string): void {
    for (const outcome of OUTCOMES) this.headers().inc({ service: this.service, listener, outcome }, 0);
  }

  /**
   * `serve`, behind the header check. `clientSpeaksFirst`: the protocol's client sends first
   * (PostgreSQL, Redis), so an unlisted peer's first bytes can be checked before the edge reads them.
   */
  wrap(serve: (socket: Socket, listener: string) => void, clientSpeaksFirst: boolean): (socket: Socket, listener: string) => void {
    return (socket, listener) => {
      const settings = this.settings();
      if (settings.from.length === 0) return serve(socket, listener);
      const peer = socket.remoteAddress ?? '';
      if (listed(this.networksFor(settings.from), peer)) return this.readHeader(socket, listener, settings, serve);
      if (clientSpeaksFirst) return this.screenUnlisted(socket, listener, serve);
      serve(socket, listener);
      // the edge greeted first; a header is the first thing this peer would send (a socket the edge took over has no more 'data')
      socket.prependOnceListener('data', (chunk: Buffer) => {
        if (looksLikeProxyHeader(chunk)) this.refuse(socket, listener, 'unlisted', 'a PROXY protocol header from a peer outside proxy_protocol_from');
      });
    };
  }

  private networksFor(from: readonly string[]): BlockList {
    const key = from.join(',');
    if (this.networks?.key !== key) this.networks = { key, list: networksOf(from) };
    return this.networks.list;
  }

  private refuse(socket: Socket, listener: string, outcome: Outcome, detail: string): void {
    this.headers().inc({ service: this.service, listener, outcome });
    this.logger.warn({ listener, client: `${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0}`, outcome, detail }, 'PROXY protocol header refused; connection closed');
    socket.destroy();
  }

  /** Reads the first chunks until the header is whole, hands the bytes after it back to the stream, then serves. */
  private readHeader(socket: Socket, listener: string, settings: ProxyProtocolSettings, serve: (socket: Socket, listener: string) => void): void {
    const decoder = new ProxyHeaderDecoder(settings.maxHeaderBytes, settings.acceptV1);
    const stop = () => {
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('end', onEnd);
    };
    const timer = setTimeout(() => (stop(), this.refuse(socket, listener, 'timeout', `no whole header within ${settings.headerTimeoutMs} ms`)), settings.headerTimeoutMs);
    const onEnd = () => (stop(), this.refuse(socket, listener, 'missing', 'the connection ended before a header'));
    const onReadable = () => {
      for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) {
        const step = decoder.push(chunk);
        if (step.kind === 'more') continue;
        stop();
        if (step.kind === 'refused') return this.refuse(socket, listener, step.reason, step.detail);
        return this.admit(socket, listener, step.header, step.rest, serve);
      }
    };
    socket.on('error', () => undefined);
    socket.on('readable', onReadable);
    socket.once('end', onEnd);
  }

  private admit(socket: Socket, listener: string, header: ProxyHeader, rest: Buffer, serve: (socket: Socket, listener: string) => void): void {
    this.headers().inc({ service: this.service, listener, outcome: 'accepted' });
    if (header.addresses) presentAs(socket, header.addresses);
    if (rest.length > 0) socket.unshift(rest);
    // the 'readable' listener is gone: on the next tick the stream leaves paused mode for whoever reads it now
    process.nextTick(() => {
      if (!socket.destroyed) serve(socket, listener);
    });
  }

  /** An unlisted peer of a client-first protocol: its first bytes must not be a header. */
  private screenUnlisted(socket: Socket, listener: string, serve: (socket: Socket, listener: string) => void): void {
    const onReadable = () => {
      const chunk = socket.read() as Buffer | null;
      if (chunk === null) return;
      socket.off('readable', onReadable);
      if (looksLikeProxyHeader(chunk)) return this.refuse(socket, listener, 'unlisted', 'a PROXY protocol header from a peer outside proxy_protocol_from');
      socket.unshift(chunk);
      process.nextTick(() => {
        if (!socket.destroyed) serve(socket, listener);
      });
    };
    socket.on('readable', onReadable);
  }
}
