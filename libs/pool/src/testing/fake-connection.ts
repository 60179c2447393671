// An in-memory connection type and factory for tests of the pool and of code that uses it:
// it records what the pool did (creates, resets, destroys and why) and can fail on request.
import { BackendPool } from '../backend-pool';
import type { ConnectionFactory, PoolOptions } from '../types';

export class FakeConnection {
  alive = true;
  resets = 0;
  /** Session state a borrower left behind; reset() clears it. */
  readonly session = new Map<string, string>();
  destroyedWith: string | undefined = undefined;

  constructor(readonly serial: number) {}
}

export interface FakeFactoryOptions {
  /** Time factory.create takes (setTimeout, so Jest fake timers control it); default 0: a microtask. */
  createDelayMs?: number;
  /** Time factory.reset takes; default 0. */
  resetDelayMs?: number;
  /** Omit reset() from the factory. */
  withoutReset?: boolean;
  /** Omit isAlive() from the factory. */
  withoutAliveCheck?: boolean;
}

export class FakeConnectionFactory implements ConnectionFactory<FakeConnection> {
  readonly created: FakeConnection[] = [];
  readonly destroyed: { connection: FakeConnection; reason: string }[] = [];
  /** The next this-many creates reject. */
  failCreates = 0;
  /** The next this-many resets reject. */
  failResets = 0;
  /** Creates never settle unless their signal aborts. */
  hangCreates = false;
  /** Resets never settle. */
  hangResets = false;
  /** Highest number of connections open at once. */
  peakOpen = 0;
  createCalls = 0;
  readonly reset?: (connection: FakeConnection) => Promise<void>;
  readonly isAlive?: (connection: FakeConnection) => boolean;

  constructor(private readonly options: FakeFactoryOptions = {}) {
    if (!options.withoutReset) this.reset = (connection) => this.resetConnection(connection);
    if (!options.withoutAliveCheck) this.isAlive = (connection) => connection.alive;
  }

  get open(): number {
    return this.created.length - this.destroyed.length;
  }

  create(signal: AbortSignal): Promise<FakeConnection> {
    this.createCalls++;
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      if (this.hangCreates) return;
      later(this.options.createDelayMs, () => {
        if (signal.aborted) return;
        if (this.failCreates > 0) {
          this.failCreates--;
          reject(new Error('connection refused'));
          return;
        }
        const connection = new FakeConnection(this.created.length + 1);
        this.created.push(connection);
        this.peakOpen = Math.max(this.peakOpen, this.open);
        resolve(connection);
      });
    });
  }

  destroy(connection: FakeConnection, reason: string): void {
    connection.alive = false;
    connection.destroyedWith = reason;
    this.destroyed.push({ connection, reason });
  }

  /** Reasons of every destroy so far, in order. */
  destroyReasons(): string[] {
    return this.destroyed.map((d) => d.reason);
  }

  private resetConnection(connection: FakeConnection): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.hangResets) return;
      later(this.options.resetDelayMs, () => {
        if (this.failResets > 0) {
          this.failResets--;
          reject(new Error('reset failed'));
          return;
        }
        connection.resets++;
        connection.session.clear();
        resolve();
      });
    });
  }
}

/** Runs `fn` after `delayMs` on a timer, or on the microtask queue when there is no delay. */
function later(delayMs: number | undefined, fn: () => void): void {
  if (delayMs === undefined || delayMs <= 0) void Promise.resolve().then(fn);
  else setTimeout(fn, delayMs);
}

/** A pool of fake connections with test-friendly defaults (short deadlines are up to the test). */
export function fakePool(
  sizing: Partial<PoolOptions<FakeConnection>> = {},
  factoryOptions: FakeFactoryOptions = {},
): { pool: BackendPool<FakeConnection>; factory: FakeConnectionFactory } {
  const factory = new FakeConnectionFactory(factoryOptions);
  const pool = new BackendPool<FakeConnection>({ backend: 'fake-primary', max: 2, factory, ...sizing });
  return { pool, factory };
}
