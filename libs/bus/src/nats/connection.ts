// Keeps one NATS connection alive for a bus: retries the first connect in the background,
// lets nats.js reconnect forever, replaces a connection that closes on its own, and tells
// subscriptions and watches when they must (re)attach.
import { connect, Events, type NatsConnection } from 'nats';
import { ConnectionStatus } from '../status';
import { classifyConnectFailure, describeConnectFailure, securityOptions, type ConnectFailureKind, type NatsAuth, type NatsTls } from './connect-options';

export interface NatsConnectionOptions {
  readonly servers: string[];
  readonly name: string;
  /** Wait between connection attempts (first connect and reconnects). */
  readonly reconnectWaitMs: number;
  /** Limit for one connection attempt (TCP + handshake). */
  readonly connectTimeoutMs: number;
  readonly pingIntervalMs: number;
  readonly maxPingOut: number;
  readonly auth?: NatsAuth;
  readonly tls?: NatsTls;
}

/** The last connection attempt failed for a reason retrying cannot fix (credentials, TLS). */
export interface ConnectFailure {
  readonly kind: ConnectFailureKind;
  readonly detail: string;
}

/** `fresh` is true for a new connection object, false when nats.js reconnected the same one. */
export type ConnectedListener = (nc: NatsConnection, fresh: boolean) => void;

export class NatsConnectionKeeper {
  readonly status: ConnectionStatus;
  private nc: NatsConnection | undefined;
  private closing = false;
  private wake: (() => void) | undefined;
  private readonly connectedListeners = new Set<ConnectedListener>();
  private readonly failureListeners = new Set<(failure: ConnectFailure) => void>();
  private lastFailure: ConnectFailure | undefined;
  private readonly running: Promise<void>;

  constructor(private readonly opts: NatsConnectionOptions) {
    this.status = new ConnectionStatus('disconnected', opts.servers.join(','));
    // keepConnected handles its own failures; the catch only guarantees no unhandled rejection.
    this.running = this.keepConnected().catch(() => undefined);
  }

  /** The connection, also while nats.js is reconnecting it; undefined before the first connect. */
  current(): NatsConnection | undefined {
    return this.nc;
  }

  /** Called on every (re)connection, and at once when already connected. */
  onConnected(listener: ConnectedListener): () => void {
    this.connectedListeners.add(listener);
    if (this.nc && this.status.value === 'connected') this.notify(listener, this.nc, true);
    return () => this.connectedListeners.delete(listener);
  }

  /** The refusal of the latest attempt when it was one (cleared by the next connection). */
  failure(): ConnectFailure | undefined {
    return this.lastFailure;
  }

  /** Called whenever an attempt is refused for its credentials or TLS (it is retried anyway). */
  onFailure(listener: (failure: ConnectFailure) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  /** Resolves at the next moment the bus is connected (or closed). */
  untilConnected(): Promise<void> {
    if (this.status.value !== 'disconnected') return Promise.resolve();
    return new Promise((resolve) => {
      const remove = this.status.listen((s) => {
        if (s === 'disconnected') return;
        remove();
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    this.status.set('closed');
    this.wake?.();
    const nc = this.nc;
    if (nc && !nc.isClosed()) {
      // Flush what is buffered when we can, but never wait on a server that is away.
      if (!nc.isDraining()) await Promise.race([nc.flush().catch(() => undefined), sleep(1000)]);
      await nc.close().catch(() => undefined);
    }
    await this.running;
  }

  private async keepConnected(): Promise<void> {
    while (!this.closing) {
      const nc = await this.attempt();
      if (!nc) {
        await this.pause();
        continue;
      }
      if (this.closing) {
        await nc.close().catch(() => undefined);
        break;
      }
      this.nc = nc;
      void this.followStatus(nc);
      this.connected(nc, true);
      const closedBy = await nc.closed();
      this.nc = undefined;
      if (closedBy) this.failed(closedBy);
      if (this.closing) break;
      // nats.js gave up on this connection (auth failure, protocol error): start a new one.
      this.status.set('disconnected');
      await this.pause();
    }
  }

  private async attempt(): Promise<NatsConnection | undefined> {
    try {
      return await connect({
        servers: this.opts.servers,
        name: this.opts.name,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: this.opts.reconnectWaitMs,
        reconnectJitter: Math.min(100, this.opts.reconnectWaitMs),
        timeout: this.opts.connectTimeoutMs,
        pingInterval: this.opts.pingIntervalMs,
        maxPingOut: this.opts.maxPingOut,
        waitOnFirstConnect: false,
        ...securityOptions(this.opts.auth, this.opts.tls),
      });
    } catch (err) {
      this.failed(err);
      return undefined;
    }
  }

  private failed(err: unknown): void {
    const kind = classifyConnectFailure(err);
    if (!kind) return;
    const failure = { kind, detail: describeConnectFailure(err) };
    this.lastFailure = failure;
    for (const listener of [...this.failureListeners]) listener(failure);
  }

  private async followStatus(nc: NatsConnection): Promise<void> {
    try {
      for await (const event of nc.status()) {
        if (event.type === Events.Disconnect) this.status.set('disconnected');
        else if (event.type === Events.Reconnect) this.connected(nc, false);
      }
    } catch {
      // The iterator ends with the connection; keepConnected sees that through nc.closed().
    }
  }

  private connected(nc: NatsConnection, fresh: boolean): void {
    this.lastFailure = undefined;
    this.status.set('connected');
    for (const listener of [...this.connectedListeners]) this.notify(listener, nc, fresh);
  }

  private notify(listener: ConnectedListener, nc: NatsConnection, fresh: boolean): void {
    try {
      listener(nc, fresh);
    } catch {
      // One subscription failing to attach (connection closing under it) must not stop the others.
    }
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.opts.reconnectWaitMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
