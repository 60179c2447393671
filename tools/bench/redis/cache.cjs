#!/usr/bin/env node
// Redis reply-cache benchmark: redis-benchmark GET with 50 clients at -P 1 and -P 16 on a hot set of
// 1,000 keys (written first) and on keys uniform over 1,000,000 (mostly missing: no locality),
// against Redis directly, twemproxy (nutcracker), redis-edge command mode without the cache and with
// [redis.cache], in one run. Prints ops/s, p50/p99, the proxy's CPU µs per GET (the steadier figure on a shared machine),
// the cache's hits/misses/fills from the edge's /metrics, and the ratios. Never run by `npm test`.
//
// Usage: node tools/bench/redis/cache.cjs [--requests 200000] [--rounds 3] [--quick] [--keys hot|uniform] [--baseline DIR]
// Starts its own Redis (libs/testing, from dist/) and runs the proxy as `./bin/dbproxy start topology
// redis-edge` (build first: npm run build). Targets are interleaved per round and the best run kept.
// --baseline DIR adds a cached edge run from another built checkout (DIR/bin/dbproxy): before/after in one run.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { ROOT, args, opt, ensureInstalled, waitPort, waitReady, cpuSeconds, pad, ratio, loadAverage, checkOptions, onInterrupt } = require('../common.cjs');

checkOptions(__filename, { values: ['requests', 'rounds', 'keys', 'baseline'], flags: ['quick'] });

const { startRedis, freePort } = require(join(ROOT, 'dist', 'libs', 'testing', 'src', 'index.js'));

const QUICK = args.includes('--quick');
const REQUESTS = Number(opt('requests', QUICK ? '50000' : '200000'));
const ROUNDS = Number(opt('rounds', QUICK ? '1' : '3'));
const CLIENTS = 50;
const PIPELINES = [1, 16];
const KEYSPACES = [
  { name: 'hot 1k', range: 1000 },
  { name: 'uniform 1M', range: 1_000_000 },
].filter((k) => !args.includes('--keys') || k.name.startsWith(opt('keys', '')));
const children = [];

function run(command, argv, options = {}) {
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  children.push(child);
  return { child, output: () => output, done: new Promise((resolve) => child.on('close', resolve)) };
}

/** twemproxy in front of the same Redis (installed with apt-get when missing, as bench.cjs does). */
async function startTwemproxy(dir, redisPort) {
  const binary = ensureInstalled('nutcracker');
  const port = await freePort();
  const conf = join(dir, 'nutcracker.yml');
  writeFileSync(conf, `bench:\n  listen: 127.0.0.1:${port}\n  hash: fnv1a_64\n  distribution: ketama\n  redis: true\n  servers:\n   - 127.0.0.1:${redisPort}:1\n`);
  const proc = run(binary, ['-c', conf, '-s', String(await freePort())]);
  await waitPort(port);
  return { port, pid: proc.child.pid };
}

async function startEdge(dir, name, redisToml, root = ROOT) {
  const [port, roPort, admin] = [await freePort(), await freePort(), await freePort()];
  const conf = join(dir, `${name}.toml`);
  writeFileSync(
    conf,
    `[telemetry]\nlog_level = "warn"\n[proxy.admin]\nlisten = "127.0.0.1:${admin}"\n[health]\ntimeout_seconds = 5\nfailures_before_down = 5\n` +
      `[mysql]\nenabled = false\n[postgres]\nenabled = false\n` +
      `[redis]\nenabled = true\nmode = "command"\nread_write_listen = "127.0.0.1:${port}"\nread_only_listen = "127.0.0.1:${roPort}"\n${redisToml}\n`,
  );
  const proc = run(process.execPath, [join(root, 'bin', 'dbproxy'), 'start', 'topology', 'redis-edge', '--config', conf], { cwd: root });
  await waitReady(admin).catch((err) => {
    throw new Error(`${err.message}\n${proc.output()}`);
  });
  return { port, pid: proc.child.pid, admin, output: proc.output };
}

const processCpu = (pid) => {
  if (!pid) return 0;
  const { user, system } = cpuSeconds(pid);
  return user + system;
};

/** The edge's cache counters from /metrics (sum over series). */
async function cacheCounters(admin) {
  if (!admin) return undefined;
  const text = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
  const value = (name) => text.split('\n').filter((l) => l.startsWith(name)).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  return { hits: value('dbproxy_redis_cache_hits_total'), misses: value('dbproxy_redis_cache_misses_total'), fills: value('dbproxy_redis_cache_fills_total'), dropped: value('dbproxy_redis_cache_fills_dropped_total') };
}

async function getRun(port, pipeline, range) {
  const argv = ['-h', '127.0.0.1', '-p', String(port), '-c', String(CLIENTS), '-n', String(REQUESTS), '-P', String(pipeline), '-r', String(range), '-t', 'get', '--csv'];
  const proc = run('redis-benchmark', argv);
  await proc.done;
  for (const line of proc.output().split('\n')) {
    const cells = line.split(',').map((c) => c.replace(/"/g, ''));
    if (cells.length >= 7 && cells[0] === 'GET') return { rps: Number(cells[1]), p50: Number(cells[4]), p99: Number(cells[6]) };
  }
  console.log(proc.output().split('\n').slice(-6).join('\n'));
  return undefined;
}

/** Redis's own CPU seconds (INFO cpu), to see what fills and tracking cost the server. */
async function serverCpu(port) {
  const proc = run('redis-cli', ['-p', String(port), 'INFO', 'cpu']);
  await proc.done;
  const field = (name) => Number(new RegExp(`${name}:([0-9.]+)`).exec(proc.output())?.[1] ?? NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

async function measure(target, pipeline, range, redisPort) {
  const serverBefore = await serverCpu(redisPort);
  const before = processCpu(target.pid);
  const counters = await cacheCounters(target.admin);
  const row = await getRun(target.port, pipeline, range);
  if (!row) return undefined;
  row.cpu = target.pid ? ((processCpu(target.pid) - before) * 1e6) / REQUESTS : NaN;
  row.serverCpu = (((await serverCpu(redisPort)) - serverBefore) * 1e6) / REQUESTS;
  const after = await cacheCounters(target.admin);
  if (counters && after && target.cached) row.cache = { hits: after.hits - counters.hits, misses: after.misses - counters.misses, fills: after.fills - counters.fills, dropped: after.dropped - counters.dropped };
  return row;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cache-bench-'));
  onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
  const single = await startRedis({ replicas: 0 });
  try {
    const port = single.primary.port;
    // The hot set exists (key:000000000000 .. key:000000000999); the uniform keys mostly do not.
    await run('redis-benchmark', ['-h', '127.0.0.1', '-p', String(port), '-c', '10', '-n', '20000', '-r', '1000', '-t', 'set', '-q']).done;
    const backend = `[[redis_backends]]\nname = "r1"\naddress = "127.0.0.1:${port}"\nrole = "primary"\n`;
    const twemproxy = await startTwemproxy(dir, port);
    const plain = await startEdge(dir, 'uncached', backend);
    const cached = await startEdge(dir, 'cached', `[redis.cache]\nenabled = true\n${backend}`);
    const targets = [
      { name: 'redis direct', port },
      { name: 'twemproxy', ...twemproxy },
      { name: 'redis-edge command', ...plain },
      { name: 'redis-edge command+cache', ...cached, cached: true },
    ];
    const baselineDir = opt('baseline', undefined);
    if (baselineDir) targets.push({ name: 'baseline command+cache', ...(await startEdge(dir, 'baseline', `[redis.cache]\nenabled = true\n${backend}`, baselineDir)), cached: true });
    console.log(`redis-benchmark GET -c ${CLIENTS} -n ${REQUESTS}, best of ${ROUNDS} interleaved round(s); load average ${loadAverage()}`);
    const results = new Map();
    for (let round = 0; round < ROUNDS; round++) {
      for (const space of KEYSPACES) {
        for (const P of PIPELINES) {
          for (const t of targets) {
            const row = await measure(t, P, space.range, port);
            const key = `${t.name}|${space.name}|${P}`;
            if (row && (!results.has(key) || row.rps > results.get(key).rps)) results.set(key, row);
          }
        }
      }
    }
    console.log(`\n${'target'.padEnd(26)} ${'keys'.padEnd(11)} ${pad('-P', 3)} ${pad('ops/s', 10)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('cpu µs/op', 9)} ${pad('redis µs/op', 11)} ${pad('vs direct', 10)} ${pad('vs uncached', 12)}  cache hits/misses/fills`);
    for (const space of KEYSPACES) {
      for (const P of PIPELINES) {
        for (const t of targets) {
          const r = results.get(`${t.name}|${space.name}|${P}`);
          if (!r) continue;
          const direct = results.get(`redis direct|${space.name}|${P}`);
          const uncached = results.get(`redis-edge command|${space.name}|${P}`);
          const cpu = Number.isFinite(r.cpu) ? r.cpu.toFixed(2) : '-';
          const cache = r.cache ? `${r.cache.hits}/${r.cache.misses}/${r.cache.fills} (${r.cache.dropped} dropped)` : '';
          console.log(`${t.name.padEnd(26)} ${space.name.padEnd(11)} ${pad(P, 3)} ${pad(Math.round(r.rps), 10)} ${pad(r.p50.toFixed(3), 7)} ${pad(r.p99.toFixed(3), 7)} ${pad(cpu, 9)} ${pad(r.serverCpu.toFixed(2), 11)} ${pad(ratio(r.rps, direct?.rps), 10)} ${pad(t.admin ? ratio(r.rps, uncached?.rps) : '-', 12)}  ${cache}`);
        }
      }
    }
    const warnings = cached.output().split('\n').filter((l) => l.includes('"level":40') || l.includes('"level":50'));
    if (warnings.length > 0) console.log(`\ncached edge: ${warnings.length} warning(s), first: ${warnings[0].slice(0, 300)}`);
    console.log(`\nload average after: ${loadAverage()}`);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await single.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  process.exit(1);
});
