// KILL [QUERY | CONNECTION] <edge connection id>: served where the session lives (this process, or
// the one whose id slot it is, over a bus request), only for the session's own user; a statement
// running on a backend is stopped by a KILL of its thread over a short-lived connection of its own
// (never a pooled one another client may be using).
import { Buffer } from 'node:buffer';
import { Capability } from '@dbproxy/protocol-mysql';
import type { Bus, Subscription } from '@dbproxy/bus';
import type { Logger } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';
import { openBackend, type BackendEndpoint } from '../backend/backend-handshake';
import { EdgeIds, slotOfId } from './edge-ids';

/** A backend thread running a session's statement. */
export interface BackendThread {
  readonly backend: string;
  readonly threadId: number;
}

/** What a KILL needs of a session. */
export interface KillableSession {
  /** The proxy user; empty before login. */
  readonly user: string;
  /** Stops the running statement: the thread to KILL QUERY, or null (idle, or stopped at the edge: pool wait, shared connection). */
  interruptQuery(): BackendThread | null;
  /** The thread KILL QUERY could not reach: the statement is ended at the edge instead (its connection closes). */
  interruptFailed(): void;
  /** Ends the session: the thread that was running its statement, to kill with it, or null. */
  killConnection(): BackendThread | null;
}

export type KillScope = 'query' | 'connection';
export type KillOutcome = 'ok' | 'denied';

export interface KillDeps {
  readonly bus: Bus;
  readonly logger: Logger;
  /** Where and as whom the pool of `backend` connects (the thread belongs to that user). */
  endpoint(backend: string): BackendEndpoint;
  /** Deadline of a remote KILL and of the dedicated backend connection. */
  timeoutMs(): number;
}

const SUBJECT = 'dbproxy.mysqledge.kill';
const KILL_CAPABILITIES = (Capability.LongPassword | Capability.LongFlag | Capability.Protocol41 | Capability.Transactions | Capability.SecureConnection | Capability.PluginAuth | Capability.PluginAuthLenencClientData) >>> 0;
/** ER_NO_SUCH_THREAD: the thread ended before the KILL reached it. */
const NO_SUCH_THREAD = ': 1094 ';

interface KillMessage {
  readonly scope: KillScope;
  readonly id: number;
  readonly user: string;
}

export class KillSwitch {
  readonly ids: EdgeIds<KillableSession>;
  private served: Subscription | null = null;

  constructor(private readonly deps: KillDeps) {
    this.ids = new EdgeIds(deps.logger);
  }

  /** Claims the id slot and answers KILLs other processes route here. */
  async start(): Promise<void> {
    await this.ids.claim(this.deps.bus);
    this.served = this.deps.bus.serve(`${SUBJECT}.${this.ids.slot}`, async (message) => {
      const ask = JSON.parse(Buffer.from(message.data).toString()) as KillMessage;
      const outcome = await this.local(ask.scope, ask.id, ask.user);
      return Buffer.from(JSON.stringify({ outcome }));
    });
    await this.served.ready;
  }

  /** A KILL from a session of `user`: 'denied' unless `id` is a session of the same user. */
  kill(scope: KillScope, id: number, user: string): Promise<KillOutcome> {
    const slot = slotOfId(id);
    if (slot < 0) return Promise.resolve('denied');
    if (slot === this.ids.slot) return this.local(scope, id, user);
    return this.remote({ scope, id, user }, slot);
  }

  private async remote(ask: KillMessage, slot: number): Promise<KillOutcome> {
    try {
      // the owner may spend its own timeoutMs on the backend's KILL before it answers
      const reply = await this.deps.bus.request(`${SUBJECT}.${slot}`, Buffer.from(JSON.stringify(ask)), { timeoutMs: 2 * this.deps.timeoutMs() + 1_000 });
      return (JSON.parse(Buffer.from(reply.data).toString()) as { outcome: KillOutcome }).outcome === 'ok' ? 'ok' : 'denied';
    } catch {
      return 'denied'; // no process owns the slot: no such session
    }
  }

  private async local(scope: KillScope, id: number, user: string): Promise<KillOutcome> {
    const session = this.ids.owner(id);
    if (session === undefined || session.user === '' || session.user !== user) return 'denied';
    if (scope === 'connection') {
      const thread = session.killConnection();
      if (thread !== null) await this.killThread(thread, 'CONNECTION');
      return 'ok';
    }
    const thread = session.interruptQuery();
    if (thread !== null && !(await this.killThread(thread, 'QUERY'))) session.interruptFailed();
    return 'ok';
  }

  /** KILL <what> <thread> on a connection of its own to the thread's backend; false when it could not be sent. */
  async killThread(thread: BackendThread, what: 'QUERY' | 'CONNECTION'): Promise<boolean> {
    try {
      const opened = await openBackend(this.deps.endpoint(thread.backend), KILL_CAPABILITIES, [{ sql: `KILL ${what} ${thread.threadId}` }], AbortSignal.timeout(this.deps.timeoutMs()));
      opened.socket.destroy();
      return true;
    } catch (err) {
      const message = errorMessage(err);
      if (message.includes(NO_SUCH_THREAD)) return true;
      this.deps.logger.warn({ backend: thread.backend, thread: thread.threadId, err: message }, 'could not send KILL to the backend');
      return false;
    }
  }

  async close(): Promise<void> {
    this.served?.unsubscribe();
    await this.ids.close();
  }
}
