// Signals and start-up of a real ./bin/dbproxy: SIGHUP reloads the --config file as a new epoch
// on the embedded bus (an invalid file keeps the current one) and never kills; a port in use
// stops everything started and exits 1; config-api refuses the example token beyond loopback.
import { createServer, connect, type Server } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { execFileSync } from 'node:child_process';
import { freePort, startNats, startRedis, tmpDir, waitFor, type RedisServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import { startDbproxy, writeConfig } from '@dbproxy/runtime/testing';
import { ADMIN_TOKEN, APP_PASSWORD, logLines, opsPorts, opsToml, startOps, waitForLine, type OpsPorts } from './support/ops-process';

jest.setTimeout(120_000);

let dir: TempDir;
let redis: ReplicatedServers<RedisServer>;

beforeAll(async () => {
  dir = await tmpDir('ops-lifecycle');
  redis = await startRedis({ replicas: 0 });
});
afterAll(async () => {
  await redis?.destroy();
  await dir?.remove();
});

const login = (port: number, password: string) => mysql.createConnection({ host: '127.0.0.1', port, user: 'app', password }).then(async (c) => (await c.end(), 'ok'), (err: { errno?: number }) => `errno ${err.errno}`);
const listening = (port: number) => new Promise<boolean>((resolve) => connect({ host: '127.0.0.1', port }).once('connect', function (this: { destroy(): void }) { this.destroy(); resolve(true); }).once('error', () => resolve(false)));

async function epochOf(api: number): Promise<{ epoch: number }> {
  const res = await fetch(`http://127.0.0.1:${api}/v1/config`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return (await res.json()) as { epoch: number };
}

describe('SIGHUP with the embedded bus', () => {
  it('applies a changed file as a new epoch, keeps serving on a broken one, and never kills', async () => {
    const ports: OpsPorts = await opsPorts();
    const redisAddress = `127.0.0.1:${redis.primary.port}`;
    const { proc, path } = await startOps(dir.path, opsToml({ ports, redisAddress }), ports.admin);
    try {
      expect((await epochOf(ports.api)).epoch).toBe(1);
      const changed = 'ops-app-password-2';
      writeFileSync(path, opsToml({ ports, redisAddress, password: changed }));
      proc.child.kill('SIGHUP');
      await waitForLine(proc, (l) => l.msg === 'configuration epoch applied' && l['epoch'] === 2, 'epoch 2 applied');
      expect(await epochOf(ports.api)).toMatchObject({ epoch: 2 });
      expect(await login(ports.mysql, changed)).toBe('ok');
      expect(await login(ports.mysql, APP_PASSWORD)).toBe('errno 1045');

      writeFileSync(path, `${readFileSync(path, 'utf8')}\n[mysql]\nmax_connections = "many"\n`);
      proc.child.kill('SIGHUP');
      const invalid = await waitForLine(proc, (l) => String(l.msg).startsWith('SIGHUP: the configuration file is invalid'), 'invalid file logged');
      expect(invalid).toMatchObject({ level: 50, epoch: 2 });
      for (let i = 0; i < 3; i++) proc.child.kill('SIGHUP');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(proc.child.exitCode).toBeNull();
      expect(await epochOf(ports.api)).toMatchObject({ epoch: 2 });
      expect(await login(ports.mysql, changed)).toBe('ok');
    } finally {
      expect(await proc.stop()).toBe(0);
    }
  });
});

describe('SIGHUP with NATS', () => {
  it('is logged and ignored by the primary and its worker processes, which keep serving', async () => {
    const nats = await startNats();
    const ports = await opsPorts();
    const toml = opsToml({ ports, redisAddress: `127.0.0.1:${redis.primary.port}` })
      .replace('[bus]\n', `[bus]\nnats_url = "${nats.url}"\n`)
      .replace('[redis]\nenabled = true\n', '[redis]\nenabled = true\nworkers = 2\n');
    const { proc } = await startOps(dir.path, toml, ports.admin, ['redis-edge', 'topology', 'config-api']);
    try {
      const workers = execFileSync('pgrep', ['-P', String(proc.child.pid)], { encoding: 'utf8' }).trim().split('\n').map(Number);
      expect(workers.length).toBe(2);
      for (const pid of [proc.child.pid as number, ...workers]) process.kill(pid, 'SIGHUP');
      await waitFor(() => logLines(proc).filter((l) => String(l.msg).startsWith('SIGHUP ignored')).length === 3, { timeoutMs: 10_000, intervalMs: 50, description: 'three SIGHUP ignored lines' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const pid of workers) expect(() => process.kill(pid, 0)).not.toThrow();
      expect(proc.child.exitCode).toBeNull();
      expect(logLines(proc).some((l) => l.msg === 'worker exited; starting a new one')).toBe(false);
      expect(await listening(ports.redis)).toBe(true);
    } finally {
      await proc.stop();
      await nats.destroy();
    }
  });
});

describe('start-up failure', () => {
  it('stops every service already started and exits 1 when a port is in use', async () => {
    const ports = await opsPorts();
    // redis-edge starts after config-api, pg-edge and mysql-edge, and binds read_write before read_only
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(ports.redisRo, '127.0.0.1', resolve));
    try {
      const path = writeConfig(dir.path, 'in-use.toml', opsToml({ ports, redisAddress: `127.0.0.1:${redis.primary.port}` }));
      const proc = startDbproxy(['start', '--config', path]);
      const code = await Promise.race([proc.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
      if (code === 'still running') await proc.stop('SIGKILL');
      expect(code).toBe(1);
      expect(proc.output()).toContain(`dbproxy failed to start: redis-edge failed to start: listen EADDRINUSE: address already in use 127.0.0.1:${ports.redisRo}`);
      const stopping = logLines(proc).find((l) => String(l.msg).startsWith('start-up failed'));
      expect(stopping?.['stopping']).toEqual(expect.arrayContaining(['config-api', 'topology', 'pg-edge', 'mysql-edge']));
      expect(logLines(proc).some((l) => l.msg === 'stopped after a start-up failure')).toBe(true);
      for (const port of [ports.api, ports.admin, ports.mysql, ports.mysqlRo, ports.pg, ports.pgRo, ports.redis]) expect(await listening(port)).toBe(false);
    } finally {
      squatter.close();
    }
  });
});

describe('config-api listen address', () => {
  const apiToml = (listen: string, token: string, admin: number) => `
[proxy.admin]
config_api = "127.0.0.1:${admin}"
[bus]
connect_timeout_seconds = 1
[config_api]
listen = "${listen}"
[[config_api.tokens]]
name = "admin"
token = "${token}"
`;

  it('refuses to start on 0.0.0.0 with the example token, and starts on loopback with it', async () => {
    const [api, admin] = [await freePort(), await freePort()];
    const exposed = startDbproxy(['start', 'config-api', '--config', writeConfig(dir.path, 'exposed.toml', apiToml(`0.0.0.0:${api}`, 'dev-admin-token-change-me', admin))]);
    expect(await exposed.exited).toBe(1);
    expect(exposed.output()).toContain(`config-api will not listen on 0.0.0.0:${api} (not a loopback address) with the example token of [[config_api.tokens]] "admin"`);
    expect(await listening(api)).toBe(false);

    const local = startDbproxy(['start', 'config-api', '--config', writeConfig(dir.path, 'local.toml', apiToml(`127.0.0.1:${api}`, 'dev-admin-token-change-me', admin))]);
    try {
      await waitFor(() => listening(api), { timeoutMs: 20_000, intervalMs: 100, description: 'config-api on loopback' });
    } finally {
      await local.stop();
    }
  });
});
