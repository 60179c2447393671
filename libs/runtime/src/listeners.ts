// Protocol listeners with admission: a service asks for a listener by address and gets each
// admitted socket; a connection over the limit or during a drain gets the service's own
// protocol error instead. The accept side is here so that worker processes can plug in.
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger, MetricsRegistry } from '@dbproxy/observability';
import { splitListen } from './admin-server';

export type RejectReason = 'max_connections' | 'draining';

export interface ListenerSpec {
  /** Name in metrics and logs, e.g. `read_write`. */
  readonly name: string;
  /** `host:port` (port 0 picks a free port: see the bound address). */
  readonly address: string;
  /** Admission limit shared by every listener of the service; read per connection (it may change with an epoch). */
  readonly maxConnections: () => number;
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

/** All listeners of one service and the connections they admitted. */
export class ServiceListeners {
  private readonly servers: Server[] = [];
  private active = 0;
  private draining = false;

  constructor(
    private readonly service: string,
    private readonly logger: Logger,
    private readonly metrics: MetricsRegistry,
  ) {}

  /** Connections admitted and still open, across this service's listeners. */
  activeConnections(): number {
    return this.active;
  }

  async listen(spec: ListenerSpec): Promise<BoundListener> {
    const accepted = this.metrics.counter({ name: 'dbproxy_connections_accepted_total', help: 'Client connections admitted', labelNames: ['service', 'listener'] });
    const rejected = this.metrics.counter({ name: 'dbproxy_connections_rejected_total', help: 'Client connections refused at admission', labelNames: ['service', 'listener', 'reason'] });
    this.metrics.gauge({
      name: 'dbproxy_connections_active',
      help: 'Client connections open',
      labelNames: ['service'],
      collect: () => undefined,
    });
    const server = createServer({ noDelay: true, keepAlive: true, keepAliveInitialDelay: 30_000 }, (socket) => {
      const reason: RejectReason | undefined = this.draining ? 'draining' : this.active >= spec.maxConnections() ? 'max_connections' : undefined;
      if (reason) {
        rejected.inc({ service: this.service, listener: spec.name, reason });
        socket.on('error', () => undefined);
        spec.reject(socket, reason);
        return;
      }
      this.active++;
      accepted.inc({ service: this.service, listener: spec.name });
      socket.once('close', () => this.active--);
      spec.onConnection(socket, spec.name);
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

  /** Stops accepting; open connections stay until the service closes them. */
  async stopAccepting(): Promise<void> {
    this.draining = true;
    await Promise.all(this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    this.servers.length = 0;
  }
}
