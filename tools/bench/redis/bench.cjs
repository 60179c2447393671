#!/usr/bin/env node
// Redis benchmark: redis-benchmark GET and SET at -P 1 and -P 16 with 50 clients against Redis
// directly, through twemproxy (nutcracker) and through redis-edge in connection mode and command
// mode, in one run; then command mode against a direct 3-master Redis Cluster. Prints ops/s,
// p50/p95/p99, the proxy's CPU µs per operation and the ratios. Never run by `npm test`.
//
// Usage: node tools/bench/redis/bench.cjs [--requests 200000] [--rounds 3] [--workers N] [--quick] [--focus]
//                                          [--defaults] [--floor] [--pipelines 1,16] [--json FILE]
// --focus: only twemproxy and command mode (one process) on standalone Redis, for iterating on the
// command-mode data path; the full run is what figures are quoted from.
// --defaults: only standalone Redis direct, twemproxy and redis-edge connection and command mode, each edge with
// its shipped defaults (its configuration names only the mode and the backend); no worker-count edge, no cluster.
// --pipelines 1,16: the -P values (comma-separated). --json FILE: also write every cell (ops/s, p95 ms, proxy
// CPU µs/op) to FILE as JSON (tools/bench/defaults.cjs reads it). --floor: also a bare Node relay (relay-floor.cjs:
// onread into one buffer, write(2) on the other descriptor), the floor connection mode's CPU per operation is held to.
// Besides the proxy's CPU per operation, the standalone Redis server's (`redis µs/op`): a relay keeps one backend
// connection per client, twemproxy and command mode multiplex them, and Redis pays for every small read and write.
// Starts its own Redis servers (libs/testing, from dist/), installs nutcracker with apt-get when
// missing, runs the proxy as `./bin/dbproxy start topology redis-edge` (build first: npm run build).
// --warmup N: before the measured runs, N unmeasured GET and SET requests per proxy at each -P (default 50000; 0: none):
// a fresh Node process runs its hot paths unoptimised at first, which a short run would otherwise mostly measure.
// Every cell runs --rounds times with the targets interleaved and the best run is kept: a shared
// machine's load comes and goes.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { ROOT, args, opt, ensureInstalled, waitPort, waitReady, cpuSeconds, pad, ratio, loadAverage, checkOptions, onInterrupt } = require('../common.cjs');

checkOptions(__filename, { values: ['warmup', 'requests', 'rounds', 'workers', 'pipelines', 'json'], flags: ['quick', 'focus', 'defaults', 'floor'] });

const { startRedis, startRedisCluster, startNats, freePort } = require(join(ROOT, 'dist', 'libs', 'testing', 'src', 'index.js'));

const QUICK = args.includes('--quick');
const FOCUS = args.includes('--focus');
const DEFAULTS = args.includes('--defaults');
const FLOOR = args.includes('--floor');
if (FLOOR && FOCUS) {
  console.error('--focus runs only twemproxy and command mode: it does not take --floor');
  process.exit(2);
}
if (DEFAULTS && (FOCUS || args.includes('--workers'))) {
  console.error('--defaults runs the shipped defaults on standalone Redis: it does not take --focus or --workers');
  process.exit(2);
}
const REQUESTS = Number(opt('requests', QUICK ? '50000' : '200000'));
const ROUNDS = Number(opt('rounds', QUICK ? '1' : '3'));
/** Unmeasured requests per proxy and -P before the measured runs (--warmup). */
const WARMUP = Number(opt('warmup', '50000'));
const CLIENTS = 50;
const PIPELINES = opt('pipelines', '1,16').split(',').map(Number);
const children = [];

function run(command, argv, options = {}) {
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  children.push(child);
  return { child, output: () => output };
}

async function startTwemproxy(dir, redisPort) {
  const binary = ensureInstalled('nutcracker');
  const port = await freePort();
  const conf = join(dir, 'nutcracker.yml');
  writeFileSync(conf, `bench:\n  listen: 127.0.0.1:${port}\n  hash: fnv1a_64\n  distribution: ketama\n  redis: true\n  servers:\n   - 127.0.0.1:${redisPort}:1\n`);
  const { child } = run(binary, ['-c', conf, '-s', String(await freePort())]);
  await waitPort(port);
  return { port, pid: child.pid };
}

/** A dbproxy process with topology and redis-edge; `natsUrl` (for worker processes) or the embedded bus. */
async function startEdge(dir, name, redisToml, natsUrl) {
  const [port, roPort, admin] = [await freePort(), await freePort(), await freePort()];
  const conf = join(dir, `${name}.toml`);
  const bus = natsUrl ? `[bus]\nnats_url = "${natsUrl}"\n` : '';
  writeFileSync(
    conf,
    // topology shares the proxy's process here: a saturated event loop must not read as a dead primary
    `${bus}[telemetry]\nlog_level = "warn"\n[proxy.admin]\nlisten = "127.0.0.1:${admin}"\n[health]\ntimeout_seconds = 5\nfailures_before_down = 5\n` +
      `[mysql]\nenabled = false\n[postgres]\nenabled = false\n` +
      `[redis]\nenabled = true\nread_write_listen = "127.0.0.1:${port}"\nread_only_listen = "127.0.0.1:${roPort}"\n${redisToml}\n`,
  );
  const proc = run(process.execPath, [join(ROOT, 'bin', 'dbproxy'), 'start', 'topology', 'redis-edge', '--config', conf], { cwd: ROOT });
  await waitReady(admin).catch((err) => {
    throw new Error(`${err.message}\n${proc.output()}`);
  });
  return { port, pid: proc.child.pid };
}

/** The bare Node relay of --floor (relay-floor.cjs) in front of `redisPort`. */
async function startRelayFloor(redisPort) {
  const port = await freePort();
  const { child } = run(process.execPath, [join(__dirname, 'relay-floor.cjs'), String(port), String(redisPort)]);
  await waitPort(port);
  return { port, pid: child.pid };
}

/** CPU seconds (user + system) a process has used so far; 0 without one. */
function processCpu(pid) {
  if (!pid) return 0;
  const { user, system } = cpuSeconds(pid);
  return user + system;
}

/** One redis-benchmark run: { GET: {rps, p50, p99, cpu, redisCpu}, SET: {...} }; cpu: the proxy's CPU µs per request over both tests, redisCpu the Redis server's (target.redisPid). */
async function benchmark(target, pipeline) {
  const [before, redisBefore] = [processCpu(target.pid), processCpu(target.redisPid)];
  const rows = await redisBenchmark(target.port, pipeline, target.cluster);
  const perOp = (pid, from) => (pid ? ((processCpu(pid) - from) * 1e6) / (2 * REQUESTS) : NaN);
  const [cpu, redisCpu] = [perOp(target.pid, before), perOp(target.redisPid, redisBefore)];
  for (const row of Object.values(rows)) Object.assign(row, { cpu, redisCpu });
  return rows;
}

function redisBenchmark(port, pipeline, cluster, requests = REQUESTS) {
  return new Promise((resolve) => {
    const argv = ['-h', '127.0.0.1', '-p', String(port), '-c', String(CLIENTS), '-n', String(requests), '-P', String(pipeline), '-r', '100000', '-t', 'get,set', '--csv', ...(cluster ? ['--cluster'] : [])];
    const { child, output } = run('redis-benchmark', argv);
    child.on('close', () => {
      const rows = {};
      for (const line of output().split('\n')) {
        const cells = line.split(',').map((c) => c.replace(/"/g, ''));
        if (cells.length >= 7 && (cells[0] === 'GET' || cells[0] === 'SET')) rows[cells[0]] = { rps: Number(cells[1]), p50: Number(cells[4]), p95: Number(cells[5]), p99: Number(cells[6]) };
      }
      if (!rows.GET || !rows.SET) console.log(output().split('\n').slice(-6).join('\n'));
      resolve(rows);
    });
  });
}

function report(title, targets, results, baselines) {
  console.log(`\n${title}`);
  console.log(`${'target'.padEnd(26)} ${pad('-P', 3)} ${pad('test', 4)} ${pad('ops/s', 10)} ${pad('p50 ms', 7)} ${pad('p95 ms', 7)} ${pad('p99 ms', 7)} ${pad('cpu µs/op', 9)} ${pad('redis µs/op', 11)}  ${baselines.map((b) => `vs ${b}`.padStart(14)).join(' ')}`);
  for (const P of PIPELINES) {
    for (const test of ['GET', 'SET']) {
      for (const t of targets) {
        const r = results[t.name][P][test];
        if (!r) continue;
        const vs = baselines.map((b) => pad(ratio(r.rps, results[b][P][test]?.rps), 14)).join(' ');
        const [cpu, redisCpu] = [r.cpu, r.redisCpu].map((v) => (Number.isFinite(v) ? v.toFixed(2) : '-'));
        console.log(`${t.name.padEnd(26)} ${pad(P, 3)} ${pad(test, 4)} ${pad(Math.round(r.rps), 10)} ${pad(r.p50.toFixed(3), 7)} ${pad(r.p95.toFixed(3), 7)} ${pad(r.p99.toFixed(3), 7)} ${pad(cpu, 9)} ${pad(redisCpu, 11)}  ${vs}`);
      }
    }
  }
}

async function measure(targets) {
  const results = Object.fromEntries(targets.map((t) => [t.name, Object.fromEntries(PIPELINES.map((P) => [P, {}]))]));
  // proxies only (Redis itself has no warm-up): their hot paths optimised before anything is measured
  if (WARMUP > 0) for (const t of targets.filter((x) => x.pid)) for (const P of PIPELINES) await redisBenchmark(t.port, P, t.cluster, WARMUP);
  for (let round = 0; round < ROUNDS; round++) {
    for (const P of PIPELINES) {
      for (const t of targets) {
        const rows = await benchmark(t, P);
        for (const test of ['GET', 'SET']) {
          const best = results[t.name][P][test];
          if (rows[test] && (!best || rows[test].rps > best.rps)) results[t.name][P][test] = rows[test];
        }
      }
    }
  }
  return results;
}

async function focused(twemproxy, commandMode) {
  console.log(`redis-benchmark -c ${CLIENTS} -n ${REQUESTS} -r 100000, best of ${ROUNDS} interleaved round(s), --focus; load average ${loadAverage()}`);
  const targets = [
    { name: 'twemproxy', ...twemproxy },
    { name: 'redis-edge command', ...commandMode },
  ];
  report('Standalone Redis (focus)', targets, await measure(targets), ['twemproxy']);
  console.log(`\nload average after: ${loadAverage()}`);
}

/** --defaults: standalone Redis direct, twemproxy and both redis-edge modes as shipped. */
async function shippedDefaults(twemproxy, commandMode, connectionMode, redis) {
  console.log(`redis-benchmark -c ${CLIENTS} -n ${REQUESTS} -r 100000, best of ${ROUNDS} interleaved round(s), --defaults; load average ${loadAverage()}`);
  const targets = [
    { name: 'redis direct', port: redis.port },
    { name: 'twemproxy', ...twemproxy },
    ...(FLOOR ? [{ name: 'node relay floor', ...(await startRelayFloor(redis.port)) }] : []),
    { name: 'redis-edge connection', ...connectionMode },
    { name: 'redis-edge command', ...commandMode },
  ].map((t) => ({ ...t, redisPid: redis.pid }));
  const results = await measure(targets);
  report('Standalone Redis, shipped defaults', targets, results, ['redis direct', 'twemproxy']);
  if (opt('json', undefined)) writeJson(opt('json'), targets, results);
  console.log(`\nload average after: ${loadAverage()}`);
}

/** Every cell as { case, target, role, tps, p95Ms, cpuUsPerOp } for tools/bench/defaults.cjs (cpu: over GET and SET together). */
function writeJson(file, targets, results) {
  const roleOf = (name) => (name.endsWith('direct') ? 'direct' : name === 'twemproxy' ? 'peer' : name === 'node relay floor' ? 'floor' : 'edge');
  const cells = [];
  for (const P of PIPELINES) {
    for (const test of ['GET', 'SET']) {
      for (const t of targets) {
        const r = results[t.name][P][test];
        if (r) cells.push({ case: `${test} -P ${P} c=${CLIENTS}`, target: t.name, role: roleOf(t.name), tps: r.rps, p95Ms: r.p95, cpuUsPerOp: r.cpu, redisCpuUsPerOp: r.redisCpu });
      }
    }
  }
  writeFileSync(file, JSON.stringify({ bench: 'redis', unit: 'ops/s', requests: REQUESTS, defaults: DEFAULTS, cells }, null, 2));
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'redis-bench-'));
  onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
  const idle = { destroy: async () => {} };
  const [single, cluster, nats] = FOCUS || DEFAULTS ? [await startRedis({ replicas: 0 }), idle, idle] : await Promise.all([startRedis({ replicas: 0 }), startRedisCluster({ masters: 3 }), startNats()]);
  try {
    if (!FOCUS && !DEFAULTS) await cluster.waitForClusterOk();
    const backend = `[[redis_backends]]\nname = "r1"\naddress = "127.0.0.1:${single.primary.port}"\nrole = "primary"\n`;
    const twemproxy = await startTwemproxy(dir, single.primary.port);
    const commandMode = await startEdge(dir, 'command', `mode = "command"\n${backend}`);
    if (FOCUS) return await focused(twemproxy, commandMode);
    const connectionMode = await startEdge(dir, 'connection', `mode = "connection"\n${backend}`);
    if (DEFAULTS) return await shippedDefaults(twemproxy, commandMode, connectionMode, single.primary);
    // The edge's default: one worker process per CPU (workers run over NATS; the primary accepts and hands sockets over).
    const workers = Number(opt('workers', String(require('node:os').availableParallelism())));
    const commandWorkers = await startEdge(dir, 'command-workers', `mode = "command"\nworkers = ${workers}\n${backend}`, nats.url);
    const seeds = cluster.masters.map((m) => `"127.0.0.1:${m.port}"`).join(', ');
    const clusterMode = await startEdge(dir, 'cluster', `mode = "command"\n[redis.cluster]\nenabled = true\nseeds = [${seeds}]`);
    console.log(`redis-benchmark -c ${CLIENTS} -n ${REQUESTS} -r 100000, best of ${ROUNDS} interleaved round(s); load average ${loadAverage()}`);
    const standalone = [
      { name: 'redis direct', port: single.primary.port },
      { name: 'twemproxy', ...twemproxy },
      ...(FLOOR ? [{ name: 'node relay floor', ...(await startRelayFloor(single.primary.port)) }] : []),
      { name: 'redis-edge connection', ...connectionMode },
      { name: 'redis-edge command', ...commandMode },
      { name: `redis-edge command ×${workers}w`, ...commandWorkers, pid: undefined },
    ].map((t) => ({ ...t, redisPid: single.primary.pid }));
    const clustered = [
      { name: 'cluster direct', port: cluster.masters[0].port, cluster: true },
      { name: 'redis-edge command/cluster', ...clusterMode },
    ];
    const results = await measure([...standalone, ...clustered]);
    report('Standalone Redis', standalone, results, ['redis direct', 'twemproxy']);
    report('3-master Redis Cluster', clustered, results, ['cluster direct']);
    console.log(`\nload average after: ${loadAverage()}`);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.allSettled([single.destroy(), cluster.destroy(), nats.destroy()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  process.exit(1);
});
