// The shutdown deadline, enforced by the runtime: a service that never finishes draining (or
// closing) cannot hold a SIGTERM'd process past proxy.shutdown_timeout_seconds + the fixed grace;
// it exits 1 naming the service, while a well-behaved service exits 0.
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { freePort, tmpDir, type TempDir } from '@dbproxy/testing';
import { CLOSE_GRACE_MS, DRAIN_LATENESS_MS } from '../src/shutdown';
import { waitForHttp, writeConfig } from '../src/testing';

jest.setTimeout(60_000);

/** Slack for process exit and a loaded machine on top of the runtime's own bounds. */
const SLACK_MS = 2_500;

type Mode = 'polite' | 'stuck-drain' | 'stuck-close';

interface Session {
  readonly socket: Socket;
  /** Everything the edge wrote to the session until it closed. */
  readonly closed: Promise<string>;
}

interface EdgeProcess {
  output(): string;
  /** JSON log lines with `msg` matching `pattern`. */
  logs(pattern: RegExp): Record<string, unknown>[];
  session(): Promise<Session>;
  /** Sends SIGTERM; resolves with the exit code and how long the exit took. */
  terminate(): Promise<{ code: number | null; elapsedMs: number }>;
  kill(): void;
}

async function startEdge(dir: string, mode: Mode, timeoutSeconds: number): Promise<EdgeProcess> {
  const [port, admin] = [await freePort(), await freePort()];
  const config = writeConfig(
    dir,
    `${mode}-${port}.toml`,
    `[proxy]\nshutdown_timeout_seconds = ${timeoutSeconds}\n[telemetry]\nlog_level = "warn"\n[proxy.admin]\nmysql_edge = "127.0.0.1:${admin}"\n[mysql]\nread_write_listen = "127.0.0.1:${port}"\n`,
  );
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'drain-edge.js'), mode, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitForHttp(`http://127.0.0.1:${admin}/readyz`).catch((err) => {
    child.kill('SIGKILL');
    throw new Error(`${String(err)}\n${output}`);
  });
  return {
    output: () => output,
    logs: (pattern) =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => pattern.test(String(line['msg']))),
    session: () =>
      new Promise((resolve, reject) => {
        const socket = connect({ port, host: '127.0.0.1' });
        let text = '';
        const closed = new Promise<string>((done) => socket.once('close', () => done(text)));
        socket.on('data', (c: Buffer) => {
          text += c.toString();
          if (text === 'hello\n') resolve({ socket, closed });
        });
        socket.once('error', reject);
      }),
    async terminate() {
      const started = Date.now();
      child.kill('SIGTERM');
      const code = await exited;
      return { code, elapsedMs: Date.now() - started };
    },
    kill: () => child.kill('SIGKILL'),
  };
}

describe('shutdown deadline', () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await tmpDir('shutdown');
  });
  afterAll(async () => {
    await dir.remove();
  });

  it('abandons a drain that never finishes at the deadline: names the service, destroys its sessions, exits 1', async () => {
    const edge = await startEdge(dir.path, 'stuck-drain', 1);
    try {
      const session = await edge.session();
      const { code, elapsedMs } = await edge.terminate();
      expect(code).toBe(1);
      expect(elapsedMs).toBeGreaterThanOrEqual(1_000);
      expect(elapsedMs).toBeLessThan(1_000 + DRAIN_LATENESS_MS + SLACK_MS);
      const [overrun] = edge.logs(/shutdown deadline overrun/);
      expect(overrun).toEqual(expect.objectContaining({ level: 50, services: ['mysql-edge'] }));
      expect(String(overrun?.['msg'])).toContain('mysql-edge did not finish draining');
      // its close left the session open: the runtime destroyed it (no goodbye from the service)
      expect(edge.logs(/destroyed connections/)).toEqual([expect.objectContaining({ service: 'mysql-edge', connections: 1 })]);
      expect(await session.closed).toBe('hello\n');
      expect(edge.output()).toContain('shutdown not clean: mysql-edge');
    } finally {
      edge.kill();
    }
  });

  it('abandons a close that never finishes after the grace and still exits 1', async () => {
    const edge = await startEdge(dir.path, 'stuck-close', 1);
    try {
      const { code, elapsedMs } = await edge.terminate();
      expect(code).toBe(1);
      expect(elapsedMs).toBeGreaterThanOrEqual(1_000 + DRAIN_LATENESS_MS + CLOSE_GRACE_MS - 200);
      expect(elapsedMs).toBeLessThan(1_000 + DRAIN_LATENESS_MS + CLOSE_GRACE_MS + SLACK_MS);
      const overruns = edge.logs(/shutdown deadline overrun/).map((l) => String(l['msg']));
      expect(overruns).toEqual([expect.stringContaining('mysql-edge did not finish draining'), expect.stringContaining(`mysql-edge did not close within ${CLOSE_GRACE_MS} ms`)]);
    } finally {
      edge.kill();
    }
  });

  it('exits 0 promptly when a well-behaved service finishes draining before the deadline', async () => {
    const edge = await startEdge(dir.path, 'polite', 20);
    try {
      const session = await edge.session();
      const terminated = edge.terminate();
      // the client finishes its session after the signal: the drain ends long before the deadline
      setTimeout(() => session.socket.end(), 200);
      const { code, elapsedMs } = await terminated;
      expect(code).toBe(0);
      expect(elapsedMs).toBeLessThan(200 + SLACK_MS);
      expect(edge.logs(/overrun|did not/)).toEqual([]);
    } finally {
      edge.kill();
    }
  });

  it('exits 0 when a well-behaved service closes the sessions still open at the deadline', async () => {
    const edge = await startEdge(dir.path, 'polite', 1);
    try {
      const session = await edge.session();
      const { code, elapsedMs } = await edge.terminate();
      expect(code).toBe(0);
      expect(elapsedMs).toBeGreaterThanOrEqual(1_000);
      expect(elapsedMs).toBeLessThan(1_000 + SLACK_MS);
      expect(await session.closed).toBe('hello\nbye\n');
      expect(edge.logs(/overrun|did not/)).toEqual([]);
    } finally {
      edge.kill();
    }
  });
});
