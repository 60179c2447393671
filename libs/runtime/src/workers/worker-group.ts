// The primary side of worker processes: fork N workers for a service, hand each admitted socket
// to the least-loaded one, gather figures from all of them, respawn a worker that dies, and
// drain them on shutdown.
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { processEnvironment } from '@dbproxy/config';
import type { Logger } from '@dbproxy/observability';
import { CLOSE_GRACE_MS, DRAIN_LATENESS_MS } from '../shutdown';
import { isWorkerMessage, type GatherRequest } from './messages';

export interface WorkerLauncher {
  /** Module forked for each worker (the dbproxy launcher). */
  readonly modulePath: string;
  /** Its arguments, e.g. `['worker', 'pg-edge', '--config', path]`. */
  args(service: string): string[];
}

interface WorkerSlot {
  child: ChildProcess;
  /** Rejects when the worker exits before it is ready (a start-up failure in the worker). */
  readonly failed: Promise<never>;
  /** Open connections handed to this worker, in all and per listener that admitted them. */
  connections: number;
  readonly byListener: Map<string, number>;
  ready: Promise<void>;
}

/** The primary's service label (metrics, logs, traces), handed to its workers so that the figures they report carry it too. */
export const WORKER_LABEL_ENV = 'DBPROXY_SERVICE_LABEL';

export class WorkerGroup {
  private readonly slots: WorkerSlot[] = [];
  private readonly pending = new Map<number, (value: { value?: unknown; error?: string }) => void>();
  private nextId = 1;
  private stopping = false;

  constructor(
    private readonly service: string,
    private readonly count: number,
    private readonly launcher: WorkerLauncher,
    private readonly logger: Logger,
    /** The primary's service label, which the workers take as theirs. */
    private readonly label: string,
    /** Called when a worker reports one of its connections closed, or dies with connections (per listener that admitted them). */
    private readonly onClosed: (listener: string, connections: number) => void,
  ) {}

  /** Forks every worker and waits until each has started its service. */
  async start(timeoutMs: number): Promise<void> {
    for (let i = 0; i < this.count; i++) this.slots.push(this.spawn(i));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(`${this.service} workers did not start within ${timeoutMs} ms`)), timeoutMs)));
    try {
      await Promise.race([Promise.all(this.slots.map((s) => s.ready)), ...this.slots.map((s) => s.failed), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  get size(): number {
    return this.slots.length;
  }

  /** Hands the socket to the worker with the fewest open connections. */
  dispatch(socket: Socket, listener: string): boolean {
    let best: WorkerSlot | undefined;
    for (const slot of this.slots) {
      if (!slot.child.connected) continue;
      if (!best || slot.connections < best.connections) best = slot;
    }
    if (!best) return false;
    const slot = best;
    slot.connections++;
    slot.byListener.set(listener, (slot.byListener.get(listener) ?? 0) + 1);
    slot.child.send({ type: 'dbproxy:connection', listener }, socket, { keepOpen: false }, (err) => {
      if (!err) return;
      closedIn(slot, listener, 1);
      this.onClosed(listener, 1);
      socket.destroy();
    });
    return true;
  }

  /** Asks every live worker for `topic` (e.g. `metrics`); failures and timeouts are left out. */
  async gather(topic: string, timeoutMs = 2_000, arg?: unknown): Promise<unknown[]> {
    const asks = this.slots.filter((s) => s.child.connected).map((slot) => this.ask(slot.child, topic, timeoutMs, arg));
    const answers = await Promise.all(asks);
    return answers.filter((a) => a.error === undefined).map((a) => a.value);
  }

  /**
   * Tells every worker to drain until `deadline` and waits for them to exit; a worker still
   * running DRAIN_LATENESS_MS + CLOSE_GRACE_MS after the deadline is killed. Says how many were
   * killed and how many exited with an error (a worker exits 1 when its own shutdown overran).
   */
  async drain(deadline: number): Promise<{ killed: number; failed: number }> {
    this.stopping = true;
    let failed = 0;
    const exits = this.slots.map(
      (slot) =>
        new Promise<void>((resolve) => {
          if (slot.child.exitCode !== null || slot.child.signalCode !== null) return resolve();
          slot.child.once('exit', (code) => {
            if (code !== 0) failed++;
            resolve();
          });
          if (slot.child.connected) slot.child.send({ type: 'dbproxy:drain', deadline });
        }),
    );
    const grace = Math.max(0, deadline - Date.now()) + DRAIN_LATENESS_MS + CLOSE_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(exits), new Promise<void>((r) => (timer = setTimeout(r, grace)))]);
    clearTimeout(timer);
    let killed = 0;
    for (const slot of this.slots) {
      if (slot.child.exitCode !== null || slot.child.signalCode !== null) continue;
      slot.child.kill('SIGKILL');
      killed++;
    }
    return { killed, failed };
  }

  private ask(child: ChildProcess, topic: string, timeoutMs: number, arg: unknown): Promise<{ value?: unknown; error?: string }> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ error: 'timeout' });
      }, timeoutMs);
      this.pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      const request: GatherRequest = arg === undefined ? { type: 'dbproxy:gather', id, topic } : { type: 'dbproxy:gather', id, topic, arg };
      child.send(request, (err) => err && this.pending.get(id)?.({ error: err.message }));
    });
  }

  private spawn(index: number): WorkerSlot {
    const child = fork(this.launcher.modulePath, this.launcher.args(this.service), {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
      env: { ...processEnvironment(), [WORKER_LABEL_ENV]: this.label },
    });
    let markReady: () => void = () => undefined;
    let isReady = false;
    let markFailed: (err: Error) => void = () => undefined;
    const failed = new Promise<never>((_r, reject) => (markFailed = reject));
    failed.catch(() => undefined); // only start() listens, and only for the first workers
    const slot: WorkerSlot = { child, failed, connections: 0, byListener: new Map(), ready: new Promise<void>((r) => (markReady = () => ((isReady = true), r()))) };
    child.on('message', (message) => {
      if (!isWorkerMessage(message)) return;
      if (message.type === 'dbproxy:worker-ready') markReady();
      else if (message.type === 'dbproxy:closed') {
        closedIn(slot, message.listener, 1);
        this.onClosed(message.listener, 1);
      } else if (message.type === 'dbproxy:gathered') {
        const settle = this.pending.get(message.id);
        this.pending.delete(message.id);
        settle?.(message.error === undefined ? { value: message.value } : { error: message.error });
      }
    });
    child.once('exit', (code, signal) => {
      if (!isReady) markFailed(new Error(`${this.service} worker ${index} exited before it was ready (code ${code ?? 'none'}, signal ${signal ?? 'none'})`));
      for (const [listener, open] of slot.byListener) if (open > 0) this.onClosed(listener, open);
      slot.byListener.clear();
      slot.connections = 0;
      if (this.stopping) return;
      this.logger.error({ service: this.service, worker: index, code, signal }, 'worker exited; starting a new one');
      const replacement = setTimeout(() => {
        if (this.stopping) return;
        const next = (this.slots[index] = this.spawn(index));
        void next.ready.then(() => this.logger.info({ service: this.service, worker: index, pid: next.child.pid, previous: { code, signal } }, 'worker restarted'));
      }, 1_000);
      replacement.unref();
    });
    return slot;
  }
}

function closedIn(slot: WorkerSlot, listener: string, count: number): void {
  slot.connections -= count;
  slot.byListener.set(listener, (slot.byListener.get(listener) ?? count) - count);
}
