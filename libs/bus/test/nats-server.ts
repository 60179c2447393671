// Test helper: a throwaway nats-server with JetStream on a free port and its own store directory,
// so a test can stop, kill and restart it. Same shape as libs/testing's startNats (which did not
// exist yet when this was written), so switching is an import change.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NatsServerHandle {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** Process id while running, else undefined. */
  readonly pid: number | undefined;
  /** Starts the server again on the same port and store (after stop or kill). */
  start(): Promise<void>;
  /** Graceful stop (SIGTERM), waits for exit. */
  stop(): Promise<void>;
  /** SIGKILL, waits for exit. */
  kill(): Promise<void>;
  /** Stops and deletes the store directory. */
  destroy(): Promise<void>;
}

const NATS_SERVER = '/usr/sbin/nats-server';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function startNatsServer(): Promise<NatsServerHandle> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'dbproxy-bus-nats-'));
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    if (child) return;
    const proc = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    child = proc;
    proc.once('exit', () => {
      if (child === proc) child = undefined;
    });
    await waitUntil(() => accepting(port), 10_000, `nats-server on ${port}`);
  };
  const signal = async (sig: NodeJS.Signals): Promise<void> => {
    const proc = child;
    if (!proc) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(sig);
    await exited;
    await waitUntil(async () => !(await accepting(port)), 5000, `nats-server on ${port} to stop`);
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    get pid() {
      return child?.pid;
    },
    start,
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
    destroy: async () => {
      await signal('SIGTERM');
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
