// Worker processes: the primary admits connections and hands each to the least-loaded worker;
// metrics and figures are gathered from every worker; SIGTERM drains them all.
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { freePort, startNats, tmpDir, waitFor, type NatsServer, type TempDir } from '@dbproxy/testing';
import { waitForHttp, writeConfig } from '../src/testing';

jest.setTimeout(60_000);

function greet(port: number): Promise<{ socket: Socket; line: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('data', (chunk) => resolve({ socket, line: chunk.toString().trim() }));
    socket.once('error', reject);
  });
}

describe('edge worker processes', () => {
  let dir: TempDir;
  let nats: NatsServer;
  beforeAll(async () => {
    dir = await tmpDir('workers');
    nats = await startNats();
  });
  afterAll(async () => {
    await nats.destroy();
    await dir.remove();
  });

  it('spreads connections over workers, enforces admission in the primary, aggregates metrics and drains', async () => {
    const [port, admin] = [await freePort(), await freePort()];
    const config = writeConfig(
      dir.path,
      'echo.toml',
      `[bus]\nnats_url = "${nats.url}"\n[telemetry]\nlog_level = "warn"\n[proxy.admin]\nmysql_edge = "127.0.0.1:${admin}"\n[mysql]\nworkers = 2\nmax_connections = 4\nread_write_listen = "127.0.0.1:${port}"\n`,
    );
    const primary = spawn(process.execPath, [join(__dirname, 'fixtures', 'echo-edge.js'), 'start', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    primary.stderr.on('data', (c: Buffer) => (output += c.toString()));
    primary.stdout.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((r) => primary.once('exit', (code) => r(code)));
    try {
      await waitForHttp(`http://127.0.0.1:${admin}/readyz`).catch((e) => {
        throw new Error(`${String(e)}\n${output}`);
      });
      const { pids } = (await (await fetch(`http://127.0.0.1:${admin}/echo/pids`)).json()) as { pids: number[] };
      expect(pids).toHaveLength(2);
      expect(pids).not.toContain(primary.pid);

      const sessions: { socket: Socket; line: string }[] = [];
      for (let i = 0; i < 4; i++) sessions.push(await greet(port));
      const servedBy = sessions.map((s) => Number(s.line.split(' ')[1]));
      // least-loaded placement: two sessions on each worker
      expect(new Set(servedBy)).toEqual(new Set(pids));
      expect(servedBy.filter((p) => p === pids[0])).toHaveLength(2);
      // the fifth is over max_connections: refused by the primary in the service's own words
      expect((await greet(port)).line).toBe('refused max_connections');
      // echo works through a worker
      const echoed = await new Promise<string>((resolve) => {
        sessions[0]?.socket.once('data', (c) => resolve(c.toString()));
        sessions[0]?.socket.write('ping');
      });
      expect(echoed).toBe('ping');
      // closing sessions in workers frees admission slots in the primary
      sessions[0]?.socket.destroy();
      const admitted = await waitFor(
        async () => {
          const next = await greet(port);
          if (!next.line.startsWith('refused')) return next;
          next.socket.destroy();
          return false;
        },
        { timeoutMs: 5_000 },
      );
      sessions.push(admitted);
      const metrics = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
      expect(metrics).toMatch(/echo_sessions_total\{service="mysql-edge"\} 5/);
      expect(metrics).toMatch(/dbproxy_connections_rejected_total\{service="mysql-edge",listener="read_write",reason="max_connections"\} [1-9]/);
      for (const s of sessions) s.socket.destroy();
      primary.kill('SIGTERM');
      expect(await exited).toBe(0);
      for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      primary.kill('SIGKILL');
    }
  });
});
