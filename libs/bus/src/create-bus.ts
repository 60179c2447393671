// Chooses the bus: NATS when a URL is configured, else the embedded in-process broker.
import { EmbeddedBroker, sharedEmbeddedBroker } from './embedded/broker';
import { EmbeddedBus } from './embedded/embedded-bus';
import { NatsBus } from './nats/nats-bus';
import type { NatsAuth, NatsTls } from './nats/connect-options';
import type { Bus } from './types';

export interface CreateBusOptions {
  /** Service name: the NATS connection name. */
  readonly name: string;
  /** `nats://host:port`, or several separated by commas; absent means the embedded bus. */
  readonly natsUrl?: string;
  /** The embedded broker to join; default the process-wide one. */
  readonly embedded?: EmbeddedBroker;
  /** Largest payload accepted by publish/request (NATS's default max_payload is 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Wait between NATS connection attempts, first connect included. Default 500 ms. */
  readonly reconnectWaitMs?: number;
  /** Limit per NATS connection attempt. Default 5000 ms. */
  readonly connectTimeoutMs?: number;
  /** Bytes published while disconnected that are kept for the reconnection. Default 8 MiB. */
  readonly reconnectBufferBytes?: number;
  /** NATS ping interval; a connection missing `maxPingOut` pongs is considered lost. Default 5000 ms, 3. */
  readonly pingIntervalMs?: number;
  readonly maxPingOut?: number;
  /** NATS credentials (user+password, token, NKey seed or .creds contents). */
  readonly auth?: NatsAuth;
  /** TLS to NATS (PEM contents); the server certificate is verified. */
  readonly tls?: NatsTls;
}

export const BusDefaults = {
  maxPayloadBytes: 1024 * 1024,
  reconnectWaitMs: 500,
  connectTimeoutMs: 5000,
  reconnectBufferBytes: 8 * 1024 * 1024,
  pingIntervalMs: 5000,
  maxPingOut: 3,
} as const;

/**
 * Creates a bus at once. A NATS bus starts 'disconnected' and connects in the background,
 * retrying forever; use `bus.waitForConnection(ms)` to wait for it.
 */
export function createBus(opts: CreateBusOptions): Bus {
  const maxPayloadBytes = opts.maxPayloadBytes ?? BusDefaults.maxPayloadBytes;
  if (!opts.natsUrl) return new EmbeddedBus({ name: opts.name, broker: opts.embedded ?? sharedEmbeddedBroker(), maxPayloadBytes });
  return new NatsBus({
    name: opts.name,
    servers: opts.natsUrl.split(',').map((s) => s.trim()).filter((s) => s.length > 0),
    maxPayloadBytes,
    reconnectWaitMs: opts.reconnectWaitMs ?? BusDefaults.reconnectWaitMs,
    connectTimeoutMs: opts.connectTimeoutMs ?? BusDefaults.connectTimeoutMs,
    reconnectBufferBytes: opts.reconnectBufferBytes ?? BusDefaults.reconnectBufferBytes,
    pingIntervalMs: opts.pingIntervalMs ?? BusDefaults.pingIntervalMs,
    maxPingOut: opts.maxPingOut ?? BusDefaults.maxPingOut,
    ...(opts.auth ? { auth: opts.auth } : {}),
    ...(opts.tls ? { tls: opts.tls } : {}),
  });
}

export { EmbeddedBroker, sharedEmbeddedBroker };
