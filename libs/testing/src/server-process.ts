// One locally spawned server: start until ready, graceful stop, SIGKILL, restart on the same port, log tail.
import { Buffer } from 'node:buffer';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PortInUse, ServerExited, StartTimeout, StopTimeout, WrongState } from './errors';
import { freePort } from './ports';
import { isAlive, processTree } from './process-tree';
import { diesWithUs, SERVER_ENV, type SystemUser } from './system';
import { sleep, withTimeout } from './wait';

export interface ServerEndpoint {
  readonly host: string;
  readonly port: number;
}

/** A server started by this library. Its port never changes, also across stop() and start(). */
export interface ServerProcess extends ServerEndpoint {
  /** Role in its group, e.g. `mariadb primary`, `postgres replica1`, `redis-cluster node2`. */
  readonly name: string;
  readonly dataDir: string;
  /** The server's stdout and stderr, appended across restarts. */
  readonly logFile: string;
  /** Process id while running, else undefined. */
  readonly pid: number | undefined;
  /** Graceful shutdown; data is kept so start() can bring it back on the same port. No-op when stopped. */
  stop(): Promise<void>;
  /** Starts a stopped server again and waits until it is ready. */
  start(): Promise<void>;
  /** SIGKILL to the server and all its processes, for fault tests. No-op when stopped. */
  kill(): Promise<void>;
  /** Stops quickly and deletes the server's files. Its group's destroy() calls this for every member. */
  destroy(): Promise<void>;
  /** The last lines of the log file. */
  logTail(lines?: number): string;
}

/** How to run one kind of server; the start functions fill this in. */
export interface ServerLaunch {
  readonly name: string;
  /** The server's own directory, holding dataDir and the log; destroy() deletes it. */
  readonly dir: string;
  readonly dataDir: string;
  readonly command: string;
  args(port: number): string[];
  readonly runAs?: SystemUser;
  /** Environment added to the server's own (e.g. variables its configuration file reads). */
  readonly env?: Readonly<Record<string, string>>;
  /** Graceful shutdown signal. */
  readonly stopSignal: NodeJS.Signals;
  /** Quick exit for destroy() and parent death: SIGQUIT lets PostgreSQL release shared memory. */
  readonly quickExitSignal: 'SIGKILL' | 'SIGQUIT';
  /** True once the server on `server.port` answers and is this process (not someone else's). */
  probe(server: LocalServer): Promise<boolean>;
  /** Runs after the process is gone for good, before its files are deleted. */
  afterExit?(): Promise<void>;
  /** How long start() waits for the probe (default 90 s: two busy cores can be slow). */
  readonly startTimeoutMs?: number;
  /** How long stop() waits before it kills (default 30 s). */
  readonly stopTimeoutMs?: number;
}

type State = 'stopped' | 'starting' | 'running' | 'stopping' | 'destroyed';

const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;
const PROBE_TIMEOUT_MS = 5_000;
const POLL_MS = 50;

export class LocalServer implements ServerProcess {
  readonly host = '127.0.0.1';
  readonly logFile: string;
  private child: ChildProcess | undefined;
  private exited: Promise<string> = Promise.resolve('not started');
  private state: State = 'stopped';

  constructor(
    private readonly launch: ServerLaunch,
    readonly port: number,
  ) {
    this.logFile = join(launch.dir, 'server.log');
  }

  get name(): string {
    return this.launch.name;
  }

  get dataDir(): string {
    return this.launch.dataDir;
  }

  get pid(): number | undefined {
    return this.state === 'running' || this.state === 'starting' ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.state === 'running';
  }

  async start(): Promise<void> {
    if (this.state !== 'stopped') throw WrongState('start', this.name, this.state);
    this.state = 'starting';
    const logStart = existsSync(this.logFile) ? statSync(this.logFile).size : 0;
    this.spawnChild();
    try {
      await this.awaitReady(logStart);
      if (this.isIn('starting')) this.state = 'running';
    } catch (err) {
      await this.signalAndWait('SIGKILL', true, STOP_TIMEOUT_MS);
      if (this.isIn('starting')) this.state = 'stopped';
      throw err;
    }
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'destroyed') return;
    if (this.state !== 'running') throw WrongState('stop', this.name, this.state);
    this.state = 'stopping';
    const timeoutMs = this.launch.stopTimeoutMs ?? STOP_TIMEOUT_MS;
    try {
      if (!(await this.signalAndWait(this.launch.stopSignal, false, timeoutMs))) {
        await this.signalAndWait('SIGKILL', true, STOP_TIMEOUT_MS);
        throw StopTimeout(this.name, timeoutMs, this.launch.stopSignal, this.logFile);
      }
    } finally {
      this.state = 'stopped';
    }
  }

  async kill(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'destroyed') return;
    if (this.state !== 'running') throw WrongState('kill', this.name, this.state);
    this.state = 'stopping';
    await this.signalAndWait('SIGKILL', true, STOP_TIMEOUT_MS);
    this.state = 'stopped';
  }

  async destroy(): Promise<void> {
    if (this.state === 'destroyed') return;
    await this.halt();
    await rm(this.launch.dir, { recursive: true, force: true, maxRetries: 3 });
  }

  /** Ends the server quickly for good but keeps its files (for reading after a failed start). */
  async halt(): Promise<void> {
    if (this.state === 'destroyed') return;
    this.state = 'destroyed';
    const quick = this.launch.quickExitSignal;
    if (!(await this.signalAndWait(quick, quick === 'SIGKILL', 10_000))) {
      await this.signalAndWait('SIGKILL', true, STOP_TIMEOUT_MS);
    }
    await this.launch.afterExit?.();
  }

  logTail(lines = 30): string {
    return readTail(this.logFile, 16_384).split('\n').slice(-lines - 1).join('\n').trimEnd();
  }

  /** A method, so TypeScript does not narrow `state` across awaits where other calls may change it. */
  private isIn(state: State): boolean {
    return this.state === state;
  }

  private spawnChild(): void {
    const deathSignal = this.launch.quickExitSignal.slice(3);
    const [file, ...argv] = diesWithUs(this.launch.command, this.launch.args(this.port), deathSignal, this.launch.runAs);
    const log = openSync(this.logFile, 'a');
    try {
      const child = spawn(file, argv, { cwd: this.launch.dir, env: { ...SERVER_ENV, ...this.launch.env }, stdio: ['ignore', log, log], detached: true });
      child.unref();
      this.exited = new Promise((resolve) => {
        child.once('exit', (code, signal) => resolve(signal ? `killed by ${signal}` : `exit code ${code}`));
        child.once('error', (err) => resolve(`spawn failed: ${err.message}`));
      });
      // A server that dies by itself (crash, OOM, a test's own signal) counts as stopped and can be started again.
      void this.exited.then(() => {
        if (this.child === child && this.isIn('running')) this.state = 'stopped';
      });
      this.child = child;
    } finally {
      closeSync(log);
    }
  }

  private async awaitReady(logStart: number): Promise<void> {
    let exit: string | undefined;
    void this.exited.then((how) => (exit = how));
    const timeoutMs = this.launch.startTimeoutMs ?? START_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (exit !== undefined) throw this.exitError(exit, logStart);
      if (!this.isIn('starting')) throw WrongState('start', this.name, this.state);
      const ready = await withTimeout(this.launch.probe(this), PROBE_TIMEOUT_MS, `${this.name} probe`).catch(() => false);
      if (ready && exit === undefined) return;
      await Promise.race([sleep(POLL_MS), this.exited]);
    }
    throw StartTimeout(this.name, timeoutMs, this.dataDir, this.logFile, this.logTail());
  }

  private exitError(exit: string, logStart: number): Error {
    const fresh = readTail(this.logFile, 65_536, logStart);
    if (/address already in use/i.test(fresh)) return PortInUse(this.name, this.port, this.logFile);
    return ServerExited(this.name, exit, this.dataDir, this.logFile, this.logTail());
  }

  /**
   * Sends `signal` to the server (and, when `tree`, to every process below it) and waits until
   * all of them are gone; false when one is still alive at the deadline.
   */
  private async signalAndWait(signal: NodeJS.Signals, tree: boolean, timeoutMs: number): Promise<boolean> {
    const child = this.child;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return true;
    const targets = tree ? processTree(child.pid) : [child.pid];
    targets.forEach((pid) => sendSignal(pid, signal));
    const exited = await withTimeout(this.exited, timeoutMs, `${this.name} to exit`).then(
      () => true,
      () => false,
    );
    return exited && allGone(targets, timeoutMs);
  }
}

/** Waits until none of `pids` is alive (a killed PostgreSQL's backends exit a moment after it). */
async function allGone(pids: readonly number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(isAlive)) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** process.kill that ignores a process that is already gone. */
function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Up to `max` bytes from the end of a file (or from `from` on), as text; '' when missing. */
function readTail(path: string, max: number, from = 0): string {
  if (!existsSync(path)) return '';
  const size = statSync(path).size;
  const start = Math.max(from, size - max);
  const buffer = Buffer.alloc(Math.max(0, size - start));
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, start);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/**
 * Starts a server on a free port, choosing another port when someone else grabbed the chosen
 * one first (ports are only free until somebody binds them). `create` builds the server object
 * for a port; `pickPort` chooses ports (Redis Cluster needs port + 10000 free as well).
 */
export async function startOnFreePort<S extends LocalServer>(
  create: (port: number) => S,
  pickPort: () => Promise<number> = freePort,
): Promise<S> {
  for (let attempt = 1; ; attempt++) {
    const server = create(await pickPort());
    try {
      await server.start();
      return server;
    } catch (err) {
      if (!PortInUse.is(err) || attempt >= 5) throw err;
    }
  }
}
