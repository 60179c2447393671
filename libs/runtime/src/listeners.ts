// Protocol listeners with admission: a service asks for a listener by address and gets each
// admitted socket; a connection over the limit or during a drain gets the service's own
// protocol error instead. The accept side is here so that worker processes can plug in.
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger, MetricsRegistry } from '@dbproxy/observability';
import { splitListen } from './admin-server';
import type { InboundProxyGate } from './proxy-protocol/inbound-gate';
import type { WorkerEndpoint } from './workers/worker-endpoint';
import type { WorkerGroup } from './workers/worker-group';

const REJECT_REASONS = ['max_connections', 'draining'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface ListenerSpec {
  /** Name in metrics and logs, e.g. `read_write`. */
  readonly name: string;
  /** `host:port` (port 0 picks a free port: see the bound address). */
  readonly address: string;
  /** This listener's admission limit (each listener counts its own connections); read per connection (it may change with an epoch). */
  readonly maxConnections: () => number;
  /** The client sends first (PostgreSQL, Redis): an unlisted peer's PROXY header is caught before the edge reads it. */
  readonly clientSpeaksFirst?: boolean;
  /** Serves an admitted connection. */
  onConnection(socket: Socket, listener: string): void;
  /** Refuses a connection in the protocol's own words (e.g. MySQL ERR 1040), then ends it. */
  reject(socket: Socket, reason: RejectReason): void;
}

export interface BoundListener {
  readonly name: string;
  /** The address actually bound, `host:port`. */
  readonly address: string;
}

/**
 * All listeners of one service and the connections they admitted. In a single process it binds
 * and serves; as the primary of worker processes it binds, admits and hands sockets to the
 * least-loaded worker; in a worker it only registers the handler for sockets handed to it.
 */
export class ServiceListeners {
  private readonly servers: Server[] = [];
  /** Admitted connections served in this process (not those handed to workers). */
  private readonly open = new Set<Socket>();
  /** Admitted connections still open, per listener (each has its own admission limit, spec 000). */
  private readonly active = new Map<string, number>();
  private draining = false;
  private workers: WorkerGroup | undefined;
  private endpoint: WorkerEndpoint | undefined;

  constructor(
    private readonly service: string,
    private readonly logger: Logger,
    private readonly metrics: MetricsRegistry,
    /** Reads PROXY protocol headers ([proxy] proxy_protocol_from) before a connection is served. */
    private readonly proxyGate?: InboundProxyGate,
  ) {}

  /** Primary of worker processes: admitted sockets go to `group`. */
  dispatchTo(group: WorkerGroup): void {
    this.workers = group;
  }

  /** Inside a worker: sockets arrive from the primary through `endpoint`. */
  receiveFrom(endpoint: WorkerEndpoint): void {
    this.endpoint = endpoint;
  }

  /** A worker reported `count` of the connections `listener` admitted as closed. */
  released(listener: string, count: number): void {
    this.active.set(listener, (this.active.get(listener) ?? count) - count);
  }

  /** Connections admitted and still open, across this service's listeners. */
  activeConnections(): number {
    if (this.endpoint) return this.endpoint.activeConnections();
    let total = 0;
    for (const open of this.active.values()) total += open;
    return total;
  }

  async listen(spec: ListenerSpec): Promise<BoundListener> {
    const direct = (socket: Socket, listener: string) => spec.onConnection(socket, listener);
    const serve = this.proxyGate ? this.proxyGate.wrap(direct, spec.clientSpeaksFirst === true) : direct;
    this.proxyGate?.register(spec.name);
    if (this.endpoint) {
      this.endpoint.handle(spec.name, serve);
      return { name: spec.name, address: spec.address };
    }
    const accepted = this.metrics.counter({ name: 'dbproxy_connections_accepted_total', help: 'Client connections admitted', labelNames: ['service', 'listener'] });
    const rejected = this.metrics.counter({ name: 'dbproxy_connections_rejected_total', help: 'Client connections refused at admission', labelNames: ['service', 'listener', 'reason'] });
    // every listener's series exist from start, at zero
    accepted.inc({ service: this.service, listener: spec.name }, 0);
    for (const reason of REJECT_REASONS) rejected.inc({ service: this.service, listener: spec.name, reason }, 0);
    const server = createServer({ noDelay: true, keepAlive: true, keepAliveInitialDelay: 30_000, pauseOnConnect: this.workers !== undefined }, (socket) => {
      const open = this.active.get(spec.name) ?? 0;
      const reason: RejectReason | undefined = this.draining ? 'draining' : open >= spec.maxConnections() ? 'max_connections' : undefined;
      if (reason) {
        rejected.inc({ service: this.service, listener: spec.name, reason });
        socket.on('error', () => undefined);
        if (this.workers) socket.resume();
        spec.reject(socket, reason);
        return;
      }
      this.active.set(spec.name, open + 1);
      accepted.inc({ service: this.service, listener: spec.name });
      if (this.workers) {
        if (!this.workers.dispatch(socket, spec.name)) {
          this.released(spec.name, 1);
          socket.resume();
          spec.reject(socket, 'draining');
        }
        return;
      }
      this.open.add(socket);
      socket.once('close', () => {
        this.released(spec.name, 1);
        this.open.delete(socket);
      });
      serve(socket, spec.name);
    });
    const { host, port } = splitListen(spec.address);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, backlog: 1024 }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.logger.error({ listener: spec.name, err: err.message }, 'listener error'));
    this.servers.push(server);
    const bound = server.address();
    const address = typeof bound === 'object' && bound ? `${bound.address.includes(':') ? `[${bound.address}]` : bound.address}:${bound.port}` : spec.address;
    this.logger.info({ listener: spec.name, address }, 'listening');
    return { name: spec.name, address };
  }

  /**
   * Stops accepting at once. Open connections stay until the service closes them (the server's
   * close callback would wait for every one of them, so it is not awaited).
   */
  stopAccepting(): void {
    this.draining = true;
    for (const server of this.servers) server.close();
    this.servers.length = 0;
  }

  /**
   * Destroys every admitted connection still open in this process: what the runtime does for a
   * service that overran its shutdown. Returns how many there were.
   */
  destroyConnections(): number {
    if (this.endpoint) return this.endpoint.destroyConnections();
    const sockets = [...this.open];
    for (const socket of sockets) socket.destroy();
    return sockets.length;
  }
}
