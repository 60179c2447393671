// redis-edge as ./bin/dbproxy with worker processes over NATS: the primary admits connections
// and hands them to two workers, each running command mode with its own backend connections;
// metrics are summed on the primary. Needs `npm run build` (bin/dbproxy runs dist/).
import { Redis } from 'ioredis';
import { startDbproxy, waitForHttp, writeConfig } from '@dbproxy/runtime/testing';
import { freePort, startNats, startRedis, tmpDir, type NatsServer, type ReplicatedServers, type RedisServer, type TempDir } from '@dbproxy/testing';

jest.setTimeout(120_000);

describe('redis-edge worker processes', () => {
  let dir: TempDir;
  let nats: NatsServer;
  let redis: ReplicatedServers<RedisServer>;
  beforeAll(async () => {
    [dir, nats, redis] = await Promise.all([tmpDir('redis-workers'), startNats(), startRedis({ replicas: 0 })]);
  });
  afterAll(async () => {
    await Promise.all([nats?.destroy(), redis?.destroy()]);
    await dir?.remove();
  });

  it('serves command mode from two workers and sums their metrics on the primary', async () => {
    const [port, roPort, admin] = [await freePort(), await freePort(), await freePort()];
    const config = writeConfig(
      dir.path,
      'workers.toml',
      `[bus]\nnats_url = "${nats.url}"\n[telemetry]\nlog_level = "warn"\n[proxy.admin]\nlisten = "127.0.0.1:${admin}"\n[mysql]\nenabled = false\n[postgres]\nenabled = false\n` +
        `[redis]\nenabled = true\nmode = "command"\nworkers = 2\nread_write_listen = "127.0.0.1:${port}"\nread_only_listen = "127.0.0.1:${roPort}"\n` +
        `[[redis_backends]]\nname = "r1"\naddress = "127.0.0.1:${redis.primary.port}"\nrole = "primary"\n`,
    );
    const proc = startDbproxy(['start', 'topology', 'redis-edge', '--config', config]);
    try {
      await waitForHttp(`http://127.0.0.1:${admin}/readyz`, 200, 60_000).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${proc.output()}`);
      });
      const clients = Array.from({ length: 4 }, () => new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0 }));
      await Promise.all(clients.map((c, i) => c.set(`w:${i}`, `${i}`)));
      expect(await Promise.all(clients.map((c, i) => c.get(`w:${i}`)))).toEqual(['0', '1', '2', '3']);
      expect(await clients[0].mget('w:0', 'w:1', 'w:2', 'w:3')).toEqual(['0', '1', '2', '3']);
      const edge = (await (await fetch(`http://127.0.0.1:${admin}/redis/edge`)).json()) as { mode: string; processes: { pid: number; sessions: number }[] };
      expect(edge.mode).toBe('command');
      expect(edge.processes).toHaveLength(2);
      expect(new Set(edge.processes.map((p) => p.pid)).size).toBe(2);
      expect(edge.processes.map((p) => p.sessions)).toEqual([2, 2]);
      const metrics = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
      expect(metrics).toMatch(/dbproxy_redis_sessions\{mode="command",listener="read_write"[^}]*\} 4/);
      clients.forEach((c) => c.disconnect());
      expect(await proc.stop('SIGTERM')).toBe(0);
    } finally {
      await proc.stop('SIGKILL');
    }
  });
});
