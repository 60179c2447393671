// Issue 14's cache coherence checker through two real redis-edge processes (./bin/dbproxy, command
// mode, [redis.cache]) on one Redis: a writer through edge A and one directly on the server, readers
// (GET and MGET) through both edges; every read must return the value its key's writer had been
// acknowledged before the read was sent, or a later one. Both edges' trackers are CLIENT KILLed mid-run:
// the caches flush (tracker_lost) and serve hits again once the trackers are back.
// Needs `npm run build` (npm test builds first).
import Redis from 'ioredis';
import { metricValue, startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, startRedis, tmpDir, waitFor, type RedisServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';

jest.setTimeout(90_000);

const RUN_MS = 6_000;
const KILL_AT_MS = 2_500;
const PREFIX = 'coh:';
/** Keys 0-3 are written through edge A, 4-7 directly on the server. */
const KEYS = Array.from({ length: 8 }, (_, k) => `${PREFIX}${k}`);
const READERS_PER_EDGE = 3;

let servers: ReplicatedServers<RedisServer>;
let dir: TempDir;

interface Edge {
  readonly name: string;
  readonly proxy: DbproxyProcess;
  readonly port: number;
  readonly admin: number;
}
let edges: Edge[] = [];
/** A third edge with consistency = "bounded" (hits at once, no barrier), not part of the checker. */
let bounded: Edge;
/** A fourth, strict, with a 1 s command timeout (the tracker barrier's watchdog). */
let watchdog: Edge;
const clients: Redis[] = [];

async function startCachingEdge(name: string, consistency = 'strict', redisExtra = ''): Promise<Edge> {
  const [port, ro, admin] = [await freePort(), await freePort(), await freePort()];
  const path = writeConfig(
    dir.path,
    `${name}.toml`,
    `
[telemetry]
log_level = "warn"
[proxy.admin]
listen = "127.0.0.1:${admin}"
[health]
timeout_seconds = 5
failures_before_down = 5
[mysql]
enabled = false
[postgres]
enabled = false
[redis]
enabled = true
mode = "command"
read_write_listen = "127.0.0.1:${port}"
read_only_listen = "127.0.0.1:${ro}"
${redisExtra}
[redis.cache]
enabled = true
consistency = "${consistency}"
[[redis_backends]]
name = "r1"
address = "127.0.0.1:${servers.primary.port}"
role = "primary"
`,
  );
  const proxy = startDbproxy(['start', 'topology', 'redis-edge', '--config', path]);
  await waitForHttp(`http://127.0.0.1:${admin}/readyz`, 200, 60_000).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${proxy.output()}`);
  });
  const edge = { name, proxy, port, admin };
  await waitFor(async () => (await metric(edge, 'dbproxy_redis_cache_trackers', { state: 'ready' })) === 1, { timeoutMs: 20_000, description: `${name}: tracker ready` });
  return edge;
}

async function metric(e: Edge, name: string, labels?: Record<string, string>): Promise<number> {
  return metricValue(await (await fetch(`http://127.0.0.1:${e.admin}/metrics`)).text(), name, labels);
}

function client(port: number): Redis {
  const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, enableOfflineQueue: true, lazyConnect: false });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  servers = await startRedis({ replicas: 0 });
  dir = await tmpDir('redis-coherence');
  [edges, bounded, watchdog] = await Promise.all([Promise.all([startCachingEdge('a'), startCachingEdge('b')]), startCachingEdge('bounded', 'bounded'), startCachingEdge('watchdog', 'strict', 'command_timeout_seconds = 1')]);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit().catch(() => undefined)));
  await Promise.all([...edges, bounded, watchdog].filter((e) => e !== undefined).map((e) => e.proxy.stop()));
  await servers?.destroy();
  await dir?.remove();
});

interface CheckerRun {
  readonly violations: string[];
  readonly errors: string[];
  readonly reads: number;
}

async function checker(onKill: () => Promise<void>): Promise<CheckerRun> {
  const [a, b] = edges as [Edge, Edge];
  const direct = client(servers.primary.port);
  await direct.mset(...KEYS.flatMap((k) => [k, '0']));
  const acked = new Map<string, number>(KEYS.map((k) => [k, 0]));
  const out = { violations: [] as string[], errors: [] as string[], reads: 0 };
  const deadline = Date.now() + RUN_MS;
  // Readers aim at the key acknowledged last half of the time: right after its write is when a hit could be stale.
  let lastWritten = KEYS[0] as string;
  const writer = async (c: Redis, keys: readonly string[]): Promise<void> => {
    for (let n = 1; Date.now() < deadline; n++) {
      for (const key of keys) {
        try {
          await c.set(key, String(n));
          acked.set(key, n);
          lastWritten = key;
          // A pause between writes lets the readers fill the key again, so the next write meets a cached entry.
          await new Promise((resolve) => setTimeout(resolve, 1));
        } catch (err) {
          out.errors.push(`write ${key}: ${(err as Error).message}`);
        }
      }
    }
  };
  const check = (edge: Edge, key: string, floor: number, got: string | null): void => {
    const value = Number(got);
    if (got === null || !(value >= floor)) out.violations.push(`${edge.name}: ${key} read ${got} after ${floor} was acknowledged`);
  };
  const reader = async (edge: Edge, c: Redis, seed: number): Promise<void> => {
    for (let r = seed; Date.now() < deadline; r++) {
      const key = r % 2 === 0 ? lastWritten : (KEYS[r % KEYS.length] as string);
      try {
        if (r % 5 === 0) {
          const keys = [key, KEYS[(r + 3) % KEYS.length] as string, KEYS[(r + 6) % KEYS.length] as string];
          const floors = keys.map((k) => acked.get(k) as number);
          const got = await c.mget(...keys);
          keys.forEach((k, j) => check(edge, k, floors[j] as number, got[j] ?? null));
        } else {
          const floor = acked.get(key) as number;
          check(edge, key, floor, await c.get(key));
        }
        out.reads++;
      } catch (err) {
        out.errors.push(`read ${key} via ${edge.name}: ${(err as Error).message}`);
      }
    }
  };
  const readers = [a, b].flatMap((edge) => Array.from({ length: READERS_PER_EDGE }, (_, j) => reader(edge, client(edge.port), j * 7)));
  const kill = new Promise<void>((resolve, reject) => setTimeout(() => onKill().then(resolve, reject), KILL_AT_MS));
  await Promise.all([writer(client(a.port), KEYS.slice(0, 4)), writer(direct, KEYS.slice(4)), ...readers, kill]);
  return out;
}

/** Calls of `command` the server has run so far (INFO commandstats). */
async function serverCalls(c: Redis, command: string): Promise<number> {
  const info = await c.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

describe('two redis-edge processes with [redis.cache] consistency = "strict"', () => {
  it('a strict hit costs one PING on the tracker (one hit per turn here), a bounded one nothing; neither a GET', async () => {
    const direct = client(servers.primary.port);
    const key = `${PREFIX}modes`;
    await direct.set(key, 'v');
    const [viaA, viaBounded] = [client((edges[0] as Edge).port), client(bounded.port)];
    for (const [edge, c] of [[edges[0] as Edge, viaA], [bounded, viaBounded]] as const) {
      await waitFor(
        async () => {
          const before = await metric(edge, 'dbproxy_redis_cache_hits_total');
          await c.get(key);
          return (await metric(edge, 'dbproxy_redis_cache_hits_total')) > before;
        },
        { timeoutMs: 5_000, description: `${edge.name}: ${key} cached` },
      );
    }
    const gets = await serverCalls(direct, 'get');
    let pings = await serverCalls(direct, 'ping');
    for (let n = 0; n < 30; n++) expect(await viaBounded.get(key)).toBe('v');
    // Only the topology services' health checks PING meanwhile.
    expect(await serverCalls(direct, 'ping')).toBeLessThan(pings + 10);
    pings = await serverCalls(direct, 'ping');
    for (let n = 0; n < 30; n++) expect(await viaA.get(key)).toBe('v');
    expect(await serverCalls(direct, 'ping')).toBeGreaterThanOrEqual(pings + 30);
    expect(await serverCalls(direct, 'get')).toBe(gets);
  });

  it('never answers a read with a value older than a write acknowledged before it, and survives killed trackers', async () => {
    const direct = client(servers.primary.port);
    const hitsBefore = await Promise.all(edges.map((e) => metric(e, 'dbproxy_redis_cache_hits_total')));
    const lostBefore = await Promise.all(edges.map((e) => metric(e, 'dbproxy_redis_cache_flushes_total', { reason: 'tracker_lost' })));
    let hitsAtKill: number[] = [];
    let hitsRecovered: number[] = [];
    const run = await checker(async () => {
      hitsAtKill = await Promise.all(edges.map((e) => metric(e, 'dbproxy_redis_cache_hits_total')));
      const trackers = ((await direct.call('CLIENT', 'LIST')) as string).split('\n').filter((l) => / resp=3 /.test(` ${l} `));
      expect(trackers.length).toBe(4); // one tracker per edge, the other two edges' too (the clients speak RESP2)
      for (const line of trackers) expect(await direct.call('CLIENT', 'KILL', 'ID', /id=(\d+)/.exec(line)?.[1] as string)).toBe(1);
      for (const e of edges) {
        await waitFor(async () => (await metric(e, 'dbproxy_redis_cache_flushes_total', { reason: 'tracker_lost' })) > (lostBefore[edges.indexOf(e)] as number), { timeoutMs: 5_000, description: `${e.name}: flushed` });
        await waitFor(async () => (await metric(e, 'dbproxy_redis_cache_trackers', { state: 'ready' })) === 1, { timeoutMs: 5_000, description: `${e.name}: tracker back` });
      }
      hitsRecovered = await Promise.all(edges.map((e) => metric(e, 'dbproxy_redis_cache_hits_total')));
    });
    const hitsAfter = await Promise.all(edges.map((e) => metric(e, 'dbproxy_redis_cache_hits_total')));
    const refetched = await Promise.all(edges.map((e) => metric(e, 'dbproxy_redis_cache_hits_refetched_total')));
    process.stdout.write(`coherence: ${run.reads} reads, ${run.violations.length} stale, hits ${JSON.stringify(hitsAfter)} (at kill ${JSON.stringify(hitsAtKill)}, recovered ${JSON.stringify(hitsRecovered)}), refetched ${JSON.stringify(refetched)}\n`);
    expect(run.errors).toEqual([]);
    expect(run.violations.slice(0, 10)).toEqual([]);
    expect(run.reads).toBeGreaterThan(200); // a loaded machine reads slowly; what counts is no stale read
    edges.forEach((_, j) => {
      // Both edges served hits before the kill and again after their trackers came back.
      expect(hitsAtKill[j]).toBeGreaterThan(hitsBefore[j] as number);
      expect(hitsAfter[j]).toBeGreaterThan(hitsRecovered[j] as number);
    });
  });

  it('a tracker whose PING stays unanswered past redis.command_timeout_seconds is closed: the waiting hit reads the server', async () => {
    const direct = client(servers.primary.port);
    const key = `${PREFIX}watchdog`;
    await direct.set(key, 'w');
    const c = client(watchdog.port);
    await waitFor(
      async () => {
        const before = await metric(watchdog, 'dbproxy_redis_cache_hits_total');
        await c.get(key);
        return (await metric(watchdog, 'dbproxy_redis_cache_hits_total')) > before;
      },
      { timeoutMs: 5_000, description: `${key} cached` },
    );
    const lost = await metric(watchdog, 'dbproxy_redis_cache_flushes_total', { reason: 'tracker_lost' });
    const refetched = await metric(watchdog, 'dbproxy_redis_cache_hits_refetched_total');
    // The server runs no command for 1.8 s: the hit's PING waits; after 1 s the tracker is closed
    // and the hit's GET goes to the server, answered when the pause ends.
    await direct.call('CLIENT', 'PAUSE', '1800', 'ALL');
    expect(await c.get(key)).toBe('w');
    expect(await metric(watchdog, 'dbproxy_redis_cache_flushes_total', { reason: 'tracker_lost' })).toBeGreaterThan(lost);
    expect(await metric(watchdog, 'dbproxy_redis_cache_hits_refetched_total')).toBeGreaterThan(refetched);
    await waitFor(async () => (await metric(watchdog, 'dbproxy_redis_cache_trackers', { state: 'ready' })) === 1, { timeoutMs: 10_000, description: 'the tracker is back' });
  });
});
