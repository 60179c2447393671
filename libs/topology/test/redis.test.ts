// topology on a real Redis primary + replica, service and edge-side client in separate processes
// on a real nats-server: down/up, replication offsets, link-down lag, readiness, and the service's
// own admin HTTP (/readyz, /metrics per backend, /topology).
import type { ReadinessReport } from '@dbproxy/runtime';
import { startNats, startRedis, tmpDir, waitFor, type NatsServer, type RedisServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import {
  baseToml,
  freePort,
  getJson,
  INTERVAL_SECONDS,
  redisCommand,
  scrapeMetrics,
  startEdgeProbe,
  startTopology,
  waitForBackend,
  writeConfig,
  type EdgeProbe,
  type MetricsScrape,
  type ProtocolDescription,
  type TopologyProcess,
} from './support';

jest.setTimeout(120_000);

describe('topology with Redis', () => {
  let redis: ReplicatedServers<RedisServer>;
  let nats: NatsServer;
  let dir: TempDir;
  let topology: TopologyProcess;
  let edge: EdgeProbe;
  let startedAt: number;

  beforeAll(async () => {
    [redis, nats, dir] = await Promise.all([startRedis({ replicas: 1 }), startNats(), tmpDir('topology-redis')]);
    const adminPort = await freePort();
    startedAt = Date.now();
    const path = writeConfig(
      dir.path,
      'dbproxy.toml',
      `${baseToml(nats.url, adminPort)}
[[redis_backends]]
name = "r-primary"
address = "127.0.0.1:${redis.primary.port}"
role = "primary"
[[redis_backends]]
name = "r-replica"
address = "127.0.0.1:${redis.replicas[0]?.port}"
role = "replica"
max_replica_lag_seconds = 2
`,
    );
    topology = await startTopology(path, adminPort);
    edge = await startEdgeProbe(path, 'redis');
    await waitFor(() => edge.client.readiness().status === 'ready', { timeoutMs: 20_000, description: 'the edge to be ready' });
  });

  afterAll(async () => {
    await edge?.stop();
    await topology?.proc.stop('SIGKILL');
    await Promise.allSettled([redis?.destroy(), nats?.destroy()]);
    await dir?.remove();
  });

  it('publishes the primary and the replica healthy, with replication offsets', async () => {
    const { client } = edge;
    expect(client.usable('default', 'primary').map((b) => b.name)).toEqual(['r-primary']);
    expect(client.usable('default', 'replica').map((b) => b.name)).toEqual(['r-replica']);
    await redisCommand(redis.primary, 'SET', 'topology-key', 'x'.repeat(1000));
    const offset = (await redisCommand(redis.primary, 'ROLE')) as [string, number];
    await waitFor(() => Number(client.lastHealth('r-replica')?.position ?? -1) >= offset[1], { timeoutMs: 15_000, description: `replica offset ${offset[1]}` });
    expect(client.lastHealth('r-primary')).toMatchObject({ up: true, roleObserved: 'primary', lagSeconds: null });
    expect(client.lastHealth('r-replica')).toMatchObject({ up: true, roleObserved: 'replica' });
    expect(client.lastHealth('r-replica')?.lagSeconds).toBeLessThan(2);
  });

  // --- the topology service's own admin HTTP (proxy.admin.topology) ---
  const UP = 'dbproxy_backend_up';
  const CHECKS = 'dbproxy_backend_checks_total';
  const FAILURES = 'dbproxy_backend_check_failures_total';
  const REDIS = { service: 'topology', protocol: 'redis' };
  const checks = (m: MetricsScrape, backend: string): number => m.value(CHECKS, { ...REDIS, backend }) ?? 0;
  // a counter with labels appears with its first increment: no series means no failure yet
  const failures = (m: MetricsScrape, backend: string): number => m.value(FAILURES, { ...REDIS, backend }) ?? 0;
  const describeRedis = async (): Promise<ProtocolDescription> => {
    const { status, body } = await getJson<ProtocolDescription>(`${topology.admin}/topology/redis`);
    expect(status).toBe(200);
    return body;
  };
  /** Scrapes until `ready` holds for the scrape (the service checks once per interval). */
  const scrapeUntil = (ready: (m: MetricsScrape) => boolean, description: string): Promise<MetricsScrape> =>
    waitFor(async () => {
      const m = await scrapeMetrics(topology.admin);
      return ready(m) ? m : false;
    }, { timeoutMs: 15_000, intervalMs: 100, description });

  it("answers /readyz 200 on the topology service's admin HTTP once its first checks ran", async () => {
    const { status, body } = await getJson<ReadinessReport>(`${topology.admin}/readyz`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ ready: true, status: 'ready', reasons: [] });
    expect(body.components['topology/checks']).toEqual({ status: 'ready' });
    expect(body.components['bus']).toEqual({ status: 'ready' });
    expect(Object.values(body.components).every((c) => c.status === 'ready')).toBe(true);
  });

  it('serves the published snapshot with roles, health and generation, and each backend\'s checks, on GET /topology[/redis]', async () => {
    const primaryAddress = `127.0.0.1:${redis.primary.port}`;
    const replicaAddress = `127.0.0.1:${redis.replicas[0]?.port}`;
    // the service's snapshot is the one the edge follows (waited for: a change may be in flight)
    const redisView = await waitFor(async () => {
      const d = await describeRedis();
      return d.snapshot?.generation === edge.client.generation() ? d : false;
    }, { description: 'the same generation on /topology/redis and in the edge' });
    const snapshot = redisView.snapshot as NonNullable<ProtocolDescription['snapshot']>;
    expect(snapshot.generation).toBeGreaterThanOrEqual(startedAt); // max(previous + 1, now in ms), none before
    expect(snapshot.generation).toBeLessThanOrEqual(Date.now());
    expect(snapshot).toMatchObject({ protocol: 'redis', epoch: edge.client.current().epoch });
    const healthy = { weight: expect.any(Number), healthy: true, lagging: false, shunned: false, draining: false, status: 'online', dns_pin: null };
    expect(snapshot.shards).toEqual([
      {
        shard: 'default',
        backends: [
          { name: 'r-primary', address: primaryAddress, role: 'primary', ...healthy },
          { name: 'r-replica', address: replicaAddress, role: 'replica', ...healthy },
        ],
      },
    ]);
    expect(redisView.cluster).toBeNull();
    expect(redisView.overlay).toMatchObject({ shunned: [] });

    const [primary, replica] = redisView.backends;
    expect(redisView.backends.map((b) => b.name)).toEqual(['r-primary', 'r-replica']);
    expect(primary).toMatchObject({ shard: 'default', role: 'primary', address: primaryAddress, connect_address: primaryAddress, state: 'up', consecutive_failures: 0, lag: { lag_seconds: null, lagging: false } });
    expect(replica).toMatchObject({ shard: 'default', role: 'replica', address: replicaAddress, connect_address: replicaAddress, state: 'up', consecutive_failures: 0, max_lag_seconds: 2, lag: { lagging: false } });
    for (const b of [primary, replica]) {
      expect(b?.checks).toBeGreaterThanOrEqual(1); // one per interval since the service started
      expect(b?.last_check).toMatchObject({ ok: true, role_observed: b?.role, position: expect.stringMatching(/^\d+$/) });
      expect(b?.last_check?.latency_ms).toBeGreaterThan(0);
      expect(b?.last_check?.latency_ms).toBeLessThan(800); // health.timeout_seconds
      expect(Date.now() - Date.parse(b?.last_check?.checked_at ?? '')).toBeLessThan(5_000);
    }
    expect(replica?.lag?.lag_seconds).toBeGreaterThanOrEqual(0);
    expect(replica?.lag?.lag_seconds).toBeLessThan(2);

    // GET /topology: every protocol, the ones without backends with an empty snapshot
    const { status, body } = await getJson<{ protocols: ProtocolDescription[] }>(`${topology.admin}/topology`);
    expect(status).toBe(200);
    expect(body.protocols.map((p) => p.protocol)).toEqual(['mysql', 'postgres', 'redis']);
    for (const empty of body.protocols.slice(0, 2)) {
      expect(empty.backends).toEqual([]);
      expect(empty.snapshot).toMatchObject({ protocol: empty.protocol, shards: [] });
    }
    const all = body.protocols[2] as ProtocolDescription;
    expect(all.snapshot?.shards).toEqual(snapshot.shards);
    expect(all.snapshot?.generation).toBeGreaterThanOrEqual(snapshot.generation);
    expect(all.backends.map((b) => [b.name, b.role, b.state])).toEqual([['r-primary', 'primary', 'up'], ['r-replica', 'replica', 'up']]);

    expect(await getJson(`${topology.admin}/topology/nosuch`)).toEqual({ status: 404, body: { error: 'unknown protocol' } });
  });

  it('exports per-backend metrics on /metrics: up with shard and role, check latency, checks counted per interval, replica lag, generation', async () => {
    const first = await scrapeMetrics(topology.admin);
    expect([UP, 'dbproxy_backend_check_latency_seconds', 'dbproxy_backend_replication_lag_seconds', 'dbproxy_backend_lagging', 'dbproxy_topology_generation'].map((n) => first.type(n))).toEqual(['gauge', 'gauge', 'gauge', 'gauge', 'gauge']);
    expect([CHECKS, FAILURES, 'dbproxy_topology_snapshots_published_total'].map((n) => first.type(n))).toEqual(['counter', 'counter', 'counter']);

    expect(first.samples(UP).filter((s) => s.labels['protocol'] === 'redis')).toEqual([
      { labels: { ...REDIS, backend: 'r-primary', shard: 'default', role: 'primary' }, value: 1 },
      { labels: { ...REDIS, backend: 'r-replica', shard: 'default', role: 'replica' }, value: 1 },
    ]);
    for (const backend of ['r-primary', 'r-replica']) {
      const latency = first.value('dbproxy_backend_check_latency_seconds', { ...REDIS, backend });
      expect(latency).toBeGreaterThan(0);
      expect(latency).toBeLessThan(0.8);
      expect(checks(first, backend)).toBeGreaterThanOrEqual(1);
      expect(failures(first, backend)).toBe(0);
      expect(first.value('dbproxy_backend_lagging', { ...REDIS, backend })).toBe(0);
    }
    // lag is a replica's: present and within max_replica_lag_seconds for it, absent for the primary
    expect(first.value('dbproxy_backend_replication_lag_seconds', { ...REDIS, backend: 'r-replica' })).toBeGreaterThanOrEqual(0);
    expect(first.value('dbproxy_backend_replication_lag_seconds', { ...REDIS, backend: 'r-replica' })).toBeLessThan(2);
    expect(first.value('dbproxy_backend_replication_lag_seconds', { ...REDIS, backend: 'r-primary' })).toBeUndefined();
    expect(first.value('dbproxy_topology_snapshots_published_total', { ...REDIS, trigger: 'change' })).toBeGreaterThanOrEqual(1);

    const scrapedAt = Date.now();
    const second = await scrapeUntil((m) => ['r-primary', 'r-replica'].every((b) => checks(m, b) >= checks(first, b) + 2), 'two more checks of each backend');
    const intervals = (Date.now() - scrapedAt) / (INTERVAL_SECONDS * 1000);
    for (const backend of ['r-primary', 'r-replica']) {
      expect(checks(second, backend) - checks(first, backend)).toBeLessThanOrEqual(Math.ceil(intervals) + 1); // one check per interval, no more
      expect(failures(second, backend)).toBe(0);
    }
    const republished = (m: MetricsScrape) => m.value('dbproxy_topology_snapshots_published_total', { ...REDIS, trigger: 'republish' }) ?? 0;
    expect(republished(second)).toBeGreaterThan(republished(first)); // republish_interval_seconds = 1
    const generation = await waitFor(async () => {
      const g = (await scrapeMetrics(topology.admin)).value('dbproxy_topology_generation', { ...REDIS });
      return g === edge.client.generation() ? g : false;
    }, { description: 'the generation gauge at the edge\'s generation' });
    expect(generation).toBeGreaterThanOrEqual(startedAt);
  });

  it('counts the failed checks of a stopped replica and shows it down (up 0) on /metrics and /topology, and up again after a restart', async () => {
    const replica = redis.replicas[0] as RedisServer;
    const before = await scrapeMetrics(topology.admin);
    const generationBefore = (await describeRedis()).snapshot?.generation ?? 0;
    await replica.stop();

    const down = await scrapeUntil((m) => m.value(UP, { ...REDIS, backend: 'r-replica' }) === 0, 'dbproxy_backend_up 0 for r-replica');
    expect(failures(down, 'r-replica') - failures(before, 'r-replica')).toBeGreaterThanOrEqual(2); // failures_before_down
    expect(down.value(UP, { ...REDIS, backend: 'r-primary' })).toBe(1);
    expect(failures(down, 'r-primary')).toBe(0);

    const view = await waitFor(async () => {
      const d = await describeRedis();
      return d.snapshot?.shards[0]?.backends.find((b) => b.name === 'r-replica')?.healthy === false ? d : false;
    }, { description: 'r-replica unhealthy in the snapshot' });
    expect(view.snapshot?.generation).toBeGreaterThan(generationBefore);
    expect(view.snapshot?.shards[0]?.backends.map((b) => [b.name, b.healthy])).toEqual([['r-primary', true], ['r-replica', false]]);
    const stopped = view.backends.find((b) => b.name === 'r-replica');
    expect(stopped).toMatchObject({ state: 'down', last_check: { ok: false, latency_ms: null, role_observed: 'unknown', position: null } });
    expect(stopped?.consecutive_failures).toBeGreaterThanOrEqual(2);
    expect(stopped?.last_check?.error).toMatch(/ECONNREFUSED|refused|closed/i);
    expect((await getJson(`${topology.admin}/readyz`)).status).toBe(200); // a replica down does not make topology unready

    // while it is down, every check fails: both counters grow by the same amount
    const later = await scrapeUntil((m) => checks(m, 'r-replica') >= checks(down, 'r-replica') + 2, 'two more checks of the stopped replica');
    expect(failures(later, 'r-replica') - failures(down, 'r-replica')).toBe(checks(later, 'r-replica') - checks(down, 'r-replica'));

    await replica.start();
    const back = await scrapeUntil((m) => m.value(UP, { ...REDIS, backend: 'r-replica' }) === 1, 'dbproxy_backend_up 1 for r-replica');
    const afterBack = await scrapeUntil((m) => checks(m, 'r-replica') >= checks(back, 'r-replica') + 2, 'two checks after the restart');
    expect(failures(afterBack, 'r-replica')).toBe(failures(back, 'r-replica'));
    expect((await describeRedis()).backends.find((b) => b.name === 'r-replica')).toMatchObject({ state: 'up', consecutive_failures: 0 });
    await waitForBackend(edge.client, 'r-replica', (b) => b.healthy && !b.lagging);
  });

  it('shows a stopped replica down within three intervals and up again once it restarts', async () => {
    const replica = redis.replicas[0] as RedisServer;
    await replica.stop();
    const downAfterMs = await waitForBackend(edge.client, 'r-replica', (b) => !b.healthy);
    expect(downAfterMs).toBeLessThanOrEqual(3 * INTERVAL_SECONDS * 1000);
    expect(edge.client.usable('default', 'replica')).toEqual([]);

    await replica.start();
    await waitForBackend(edge.client, 'r-replica', (b) => b.healthy && !b.lagging);
  });

  it('marks a hung replica (SIGSTOP) down through check timeouts, and up again after SIGCONT', async () => {
    const replica = redis.replicas[0] as RedisServer;
    process.kill(replica.pid as number, 'SIGSTOP');
    try {
      await waitForBackend(edge.client, 'r-replica', (b) => !b.healthy);
      expect(edge.client.lastHealth('r-replica')?.error).toMatch(/timed out after 800 ms/);
    } finally {
      process.kill(replica.pid as number, 'SIGCONT');
    }
    await waitForBackend(edge.client, 'r-replica', (b) => b.healthy && !b.lagging);
  });

  it('marks a replica that stopped replicating (REPLICAOF NO ONE) lagging, and clears it when it replicates again', async () => {
    const replica = redis.replicas[0] as RedisServer;
    await redisCommand(replica, 'REPLICAOF', 'NO', 'ONE');
    await waitForBackend(edge.client, 'r-replica', (b) => b.lagging && b.healthy);
    expect(edge.client.lastHealth('r-replica')?.roleObserved).toBe('primary');
    expect(edge.client.usable('default', 'replica')).toEqual([]);

    await redisCommand(replica, 'REPLICAOF', redis.primary.host, String(redis.primary.port));
    await waitForBackend(edge.client, 'r-replica', (b) => !b.lagging, 30_000);
  });

  it('makes the edge unready (503) with the reason while the primary is down, and ready once it is back', async () => {
    await redis.primary.stop();
    const { body } = await waitFor(async () => {
      const r = await edge.readyz();
      return r.status === 503 ? r : false;
    }, { timeoutMs: 15_000, description: '/readyz 503' });
    expect(body.reasons.join('\n')).toMatch(/redis-edge\/topology: unready \(shard default primary r-primary \(127\.0\.0\.1:\d+\) is down: .+\)/);

    await redis.primary.start();
    await waitFor(async () => (await edge.readyz()).status === 200, { timeoutMs: 20_000, description: '/readyz 200 again' });
  });
});
