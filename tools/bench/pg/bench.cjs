#!/usr/bin/env node
// PostgreSQL benchmark: pgbench -S and the default TPC-B-like script, simple and -M extended, 10 and
// 50 clients, against PostgreSQL directly, through PgBouncer (transaction pooling) and through
// pg-edge in transparent and transaction modes, in one run; prints TPS, average and p95 latency (p95 from
// pgbench's per-transaction log, -l) and the ratios,
// then the resident memory per idle client connection of each proxy. Never run by `npm test`.
//
// Usage: node tools/bench/pg/bench.cjs [--duration 10] [--rounds 2] [--quick] [--soak] [--idle 1000]
//   --quick   3 s per run;  --soak  also pgbench -c 50 -M extended -T 60 through the transaction pool
//   --idle N  idle client connections for the memory figure (transparent mode: at most 40, each holds a backend)
// While iterating on one cell (each run also prints the proxy's CPU time per transaction, which a
// shared machine's load disturbs far less than TPS):
//   --select-only  only pgbench -S;  --clients 50  only these client counts (comma-separated);
//   --protocols simple,extended,prepared;  --no-direct  skip PostgreSQL direct;  --no-memory  skip the idle-memory figure
//   --memory-only  only the idle-memory figure (after pgbench runs the pg-edge processes are restarted for it anyway)
//   --pipeline-pool P  the pipelined pg-edge's pool_max_per_backend (default: the common pool size)
//   --pipeline-depth N  also run transaction mode with [postgres] pipeline_depth = N (reads queued behind
//                 other sessions' reads on a lent connection when the pool is saturated)
//   --strace DIR  count each proxy run's system calls with `strace -c -f` into DIR (slows the proxy: counts, not speed)
//   --workers N  pg-edge worker processes ([postgres] workers; N > 1 starts a nats-server per pg-edge for its bus);
//                proxy CPU then counts the whole process tree
//   --defaults  every proxy with its shipped defaults: pg-edge's configuration names only listeners, the user and the
//               backend (pool_max_per_backend, pipeline_depth, read_after_write_seconds, workers as shipped), PgBouncer
//               without default_pool_size (its own default); not combined with --pipeline-depth, --pipeline-pool or --workers
//   --json FILE  also write every cell (tps, p95 ms, proxy CPU µs/tx per target) to FILE as JSON (tools/bench/defaults.cjs reads it)
//   --warmup S  before the measured runs, drive every proxy with pgbench for S seconds per script and protocol at
//               the largest client count, unmeasured (default 2; 0: none): a fresh Node process runs its hot paths
//               unoptimised for its first seconds, and a 3 s --quick run otherwise measures mostly that warm-up
//   --perf DIR  record each proxy run with `perf record -g` into DIR (EDGE_NODE_FLAGS=--perf-basic-prof names JS frames)
// Starts its own PostgreSQL (libs/testing), installs pgbouncer with apt-get when missing, runs the
// proxy as `./bin/dbproxy start pg-edge topology` (build first with `npm run build`).
'use strict';
require('../sql/ts-register.cjs');
const { spawn, execFileSync } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync, readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { args, opt, sleep, ensureInstalled, waitPort, waitReady, cpuSeconds, treeCpu, treeRss, machineTicks, idleShare, checkOptions, onInterrupt } = require('../common.cjs');

checkOptions(__filename, { values: ['json', 'warmup', 'duration', 'idle', 'rounds', 'clients', 'protocols', 'pipeline-depth', 'pipeline-pool', 'workers', 'perf', 'strace'], flags: ['quick', 'select-only', 'no-direct', 'memory-only', 'soak', 'no-memory', 'defaults'] });
const { startPostgres, startNats, freePort } = require('../../../libs/testing/src/index.ts');
const { IdleClients } = require('./idle-clients.cjs');
const { postgresIds, writePgbouncerConfig } = require('./pgbouncer.cjs');

const DURATION = args.includes('--quick') ? 3 : Number(opt('duration', '10'));
const IDLE = Number(opt('idle', '1000'));
/** Unmeasured seconds of pgbench per proxy, script and protocol before the measured runs (--warmup). */
const WARMUP = Number(opt('warmup', '2'));
/** Each cell is run this many times, targets interleaved, and the best run is kept: a shared machine's load comes and goes. */
const ROUNDS = Number(opt('rounds', '2'));
const CLIENTS = opt('clients', '10,50').split(',').map(Number);
const PROTOCOL_NAMES = opt('protocols', 'simple,extended').split(',');
const POOL = 20;
/** With N > 1, a third pg-edge runs transaction mode with [postgres] pipeline_depth = N beside the one without. */
const PIPELINE_DEPTH = Number(opt('pipeline-depth', '1'));
/** Pool size of the pipelined pg-edge (--pipeline-pool; default the common pool size). */
const PIPELINE_POOL = opt('pipeline-pool', '');
const PASSWORD = 'bench-secret';
/** pg-edge worker processes; more than one needs a NATS bus (one per pg-edge: a shared bus would share configuration). */
const WORKERS = Number(opt('workers', '1'));
const buses = [];
/** --defaults: only shipped defaults (no pool size, pipelining, read-after-write window or worker count set here). */
const DEFAULTS = args.includes('--defaults');
if (DEFAULTS && ['--pipeline-depth', '--pipeline-pool', '--workers'].some((o) => args.includes(o))) {
  console.error('--defaults runs the shipped defaults: it does not take --pipeline-depth, --pipeline-pool or --workers');
  process.exit(2);
}

const PERF_DIR = opt('perf', undefined);
const STRACE_DIR = opt('strace', undefined);
let perfRuns = 0;

/** PostgreSQL's postmaster pid (set by main): its backends' CPU is read per run. */
let postmasterPid;

/**
 * CPU seconds of PostgreSQL (live processes under the postmaster plus what its exited backends
 * left in its children's time) and of pgbench (this process's reaped children).
 */
function serverCpu() {
  const total = (c) => c.user + c.system;
  const pg = postmasterPid ? total(treeCpu(postmasterPid)) + total(cpuSeconds(postmasterPid, true)) : NaN;
  return { pg, pgbench: total(cpuSeconds(process.pid, true)) };
}

/**
 * The 95th percentile in ms of the transaction latencies pgbench logged (-l) into `logDir`: one file
 * per thread, a line per transaction whose third field is its latency in µs ("failed" or "skipped"
 * for those that did not complete).
 */
function p95FromLogs(logDir) {
  const latencies = [];
  for (const file of readdirSync(logDir)) {
    for (const line of readFileSync(join(logDir, file), 'utf8').split('\n')) {
      const us = Number(line.split(' ')[2]);
      if (line && Number.isFinite(us)) latencies.push(us);
    }
  }
  if (latencies.length === 0) return NaN;
  latencies.sort((a, b) => a - b);
  return latencies[Math.min(latencies.length - 1, Math.ceil(0.95 * latencies.length) - 1)] / 1000;
}

function pgbench(port, user, extra, env = {}, pid = undefined, duration = DURATION) {
  const cpuOf = (p) => (WORKERS > 1 ? { ...treeCpu(p), minorFaults: cpuSeconds(p).minorFaults } : cpuSeconds(p));
  const cpuBefore = pid ? cpuOf(pid) : { user: 0, system: 0 };
  const ticksBefore = machineTicks();
  const serversBefore = serverCpu();
  if (PERF_DIR && pid) {
    const out = join(PERF_DIR, `perf.${++perfRuns}.${pid}.${extra.join('')}.data`);
    spawn('perf', ['record', '-F', '999', '-g', '-p', String(pid), '-o', out, '--', 'sleep', String(Math.max(1, duration - 2))], { stdio: 'ignore' });
  }
  if (STRACE_DIR && pid) {
    const out = join(STRACE_DIR, `strace.${++perfRuns}.${pid}.${extra.join('')}.txt`);
    const tracer = spawn('strace', ['-c', '-f', '-p', String(pid), '-o', out], { stdio: 'ignore' });
    setTimeout(() => tracer.kill('SIGINT'), duration * 1000 - 500);
  }
  const logDir = mkdtempSync(join(tmpdir(), 'dbproxy-bench-pgbench-log-'));
  return new Promise((resolve) => {
    const log = ['-l', '--log-prefix', join(logDir, 'tx')];
    const child = spawn('pgbench', ['-h', '127.0.0.1', '-p', String(port), '-U', user, '-n', '-j', '2', '-T', String(duration), ...log, ...extra, 'bench'], {
      env: { ...process.env, PGPASSWORD: PASSWORD, ...env },
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('close', () => {
      const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN);
      const latency = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1] ?? NaN);
      const p95 = p95FromLogs(logDir);
      rmSync(logDir, { recursive: true, force: true });
      const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
      const processed = Number(/actually processed: (\d+)/.exec(out)?.[1] ?? 0);
      // e.g. PgBouncer before 1.21 with -M prepared: a client whose statement is not on its server connection stops
      const aborted = (out.match(/client \d+ aborted/g) ?? []).length;
      if (!Number.isFinite(tps)) console.log(out.split('\n').slice(-8).join('\n'));
      const cpuAfter = pid ? cpuOf(pid) : { user: 0, system: 0 };
      const idle = idleShare(ticksBefore, machineTicks());
      const servers = serverCpu();
      const serverUs = (k) => (processed > 0 ? ((servers[k] - serversBefore[k]) * 1e6) / processed : NaN);
      const perTx = (k) => (pid && processed > 0 ? ((cpuAfter[k] - cpuBefore[k]) * 1e6) / processed : NaN);
      resolve({ tps, latency, p95, failed, aborted, processed, idle, pgUsPerTx: serverUs('pg'), pgbenchUsPerTx: serverUs('pgbench'), cpuUsPerTx: perTx('user') + perTx('system'), userUsPerTx: perTx('user'), faultsPerTx: pid && processed > 0 ? (cpuAfter.minorFaults - cpuBefore.minorFaults) / processed : NaN });
    });
  });
}

async function startPgbouncer(bin, dir, pgPort, port) {
  const ini = writePgbouncerConfig(dir, { pgPort, port, password: PASSWORD, defaultPoolSize: DEFAULTS ? undefined : POOL });
  const child = spawn(bin, [ini], { ...postgresIds(), stdio: 'ignore' });
  await waitPort(port);
  return child;
}

async function startEdge(dir, name, pgPort, mode, pipelineDepth = 1, pool = POOL) {
  const nats = WORKERS > 1 ? await startNats() : undefined;
  if (nats) buses.push(nats);
  const natsUrl = nats?.url;
  const rw = await freePort();
  const admin = await freePort();
  const config = join(dir, `${name}.toml`);
  writeFileSync(
    config,
    `[telemetry]\nlog_level = "warn"\n[proxy.admin]\nlisten = "127.0.0.1:${admin}"\n[bus]\nconnect_timeout_seconds = 1\n${natsUrl ? `nats_url = "${natsUrl}"\n` : ''}` +
      `[[users]]\nname = "postgres"\npassword = "${PASSWORD}"\n` +
      `[health]\ninterval_seconds = 2\n[mysql]\nenabled = false\n[redis]\nenabled = false\n` +
      `[postgres]\nenabled = true\n${DEFAULTS ? '' : `workers = ${WORKERS}\n`}routing_mode = "${mode}"\nread_write_listen = "127.0.0.1:${rw}"\nread_only_listen = "127.0.0.1:${await freePort()}"\n` +
      (DEFAULTS ? '' : `pool_max_per_backend = ${pool}\nmax_connections = 10000\nread_after_write_seconds = 0\npipeline_depth = ${pipelineDepth}\n`) +
      `[[postgres_backends]]\nname = "primary"\naddress = "127.0.0.1:${pgPort}"\nrole = "primary"\nusername = "postgres"\ndatabase = "bench"\n`,
  );
  const child = spawn(process.execPath, [...(process.env.EDGE_NODE_FLAGS ?? '').split(' ').filter(Boolean), join(__dirname, 'edge-launcher.cjs'), config], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitPort(rw);
  await waitReady(admin, 20000).catch(() => undefined); // measured as it is when not ready by then
  return { child, port: rw, admin };
}

const SCRIPTS = [
  ['select-only (-S)', ['-S']],
  ['TPC-B-like', []],
].filter(([, scriptArgs]) => !args.includes('--select-only') || scriptArgs.includes('-S'));
const PROTOCOLS = [
  ['simple', ['-M', 'simple']],
  ['extended', ['-M', 'extended']],
  // named statements: PgBouncer serves them in transaction mode only from 1.21 (max_prepared_statements)
  ['prepared', ['-M', 'prepared']],
].filter(([name]) => PROTOCOL_NAMES.includes(name));

async function main() {
  const bouncerBin = ensureInstalled('pgbouncer');
  const dir = mkdtempSync(join(tmpdir(), 'dbproxy-bench-pg-'));
  onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
  console.log(`starting PostgreSQL (libs/testing)...`);
  // The pgbench tables in memory; four proxies' pools plus transparent mode's 50 clients.
  const pg = await startPostgres({ replicas: 0, settings: { shared_buffers: '256MB', max_connections: '300' } });
  postmasterPid = pg.primary.pid;
  const admin = new (require('pg').Client)({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE bench');
  await admin.end();
  execFileSync('pgbench', ['-i', '-q', '-s', '10', '-h', '127.0.0.1', '-p', String(pg.primary.port), '-U', 'postgres', 'bench'], { stdio: 'ignore' });
  const targets = [];
  const children = [];
  try {
    if (!args.includes('--no-direct')) targets.push({ name: 'PostgreSQL direct', port: pg.primary.port, user: 'postgres' });
    const bouncerPort = await freePort();
    const bouncer = await startPgbouncer(bouncerBin, dir, pg.primary.port, bouncerPort);
    children.push(bouncer);
    targets.push({ name: 'PgBouncer (transaction)', port: bouncerPort, user: 'postgres', pid: bouncer.pid });
    /**
     * A pg-edge target; `restart()` replaces its process with a fresh one (same configuration).
     * `pipelined`: its admin port is read for the share of units pipelined.
     */
    const edgeTarget = async (name, start, pipelined = false) => {
      const target = { name, user: 'postgres' };
      target.restart = async () => {
        if (target.child) {
          target.child.kill('SIGTERM');
          await new Promise((r) => (target.child.exitCode !== null ? r() : target.child.once('exit', r)));
        }
        const edge = await start();
        children.push(edge.child);
        Object.assign(target, { child: edge.child, port: edge.port, pid: edge.child.pid, ...(pipelined ? { admin: edge.admin } : {}) });
      };
      await target.restart();
      return target;
    };
    for (const mode of ['transparent', 'transaction']) targets.push(await edgeTarget(`pg-edge ${mode}`, () => startEdge(dir, mode, pg.primary.port, mode)));
    if (PIPELINE_DEPTH > 1) {
      const pool = PIPELINE_POOL ? Number(PIPELINE_POOL) : POOL;
      const name = `pg-edge transaction+pipeline ${PIPELINE_DEPTH}${PIPELINE_POOL ? ` pool ${pool}` : ''}`;
      targets.push(await edgeTarget(name, () => startEdge(dir, 'pipelined', pg.primary.port, 'transaction', PIPELINE_DEPTH, pool), true));
    }
    if (!args.includes('--memory-only')) await warmUp(targets);
    const results = [];
    for (const [script, scriptArgs] of args.includes('--memory-only') ? [] : SCRIPTS) {
      for (const [protocol, protocolArgs] of PROTOCOLS) {
        for (const clients of CLIENTS) {
          const row = { script, protocol, clients, cells: {} };
          for (let round = 0; round < ROUNDS; round++) {
            for (const target of targets) {
              const pipelinedBefore = target.admin ? await pipelinedUnits(target.admin) : 0;
              const r = await pgbench(target.port, target.user, ['-c', String(clients), ...protocolArgs, ...scriptArgs], {}, target.pid);
              if (target.admin) r.pipelinedPerTx = ((await pipelinedUnits(target.admin)) - pipelinedBefore) / r.processed;
              const best = row.cells[target.name];
              if (!best || !(best.tps >= r.tps)) row.cells[target.name] = r;
              process.stdout.write(`  ${script} ${protocol} c=${clients} ${target.name}: ${r.tps.toFixed(0)} tps, ${r.latency} ms avg, p95 ${r.p95.toFixed(2)} ms, machine ${(100 * r.idle).toFixed(0)}% idle, CPU/tx PostgreSQL ${r.pgUsPerTx.toFixed(0)} µs, pgbench ${r.pgbenchUsPerTx.toFixed(0)} µs${Number.isFinite(r.cpuUsPerTx) ? `, ${r.cpuUsPerTx.toFixed(0)} µs proxy CPU/tx (${r.userUsPerTx.toFixed(0)} user, ${r.faultsPerTx.toFixed(2)} page faults)` : ''}${r.pipelinedPerTx !== undefined ? `, ${(100 * r.pipelinedPerTx).toFixed(0)}% of units pipelined` : ''}${r.failed ? `, ${r.failed} failed` : ''}${r.aborted ? `, ${r.aborted} clients aborted` : ''}\n`);
            }
          }
          results.push(row);
        }
      }
    }
    if (results.length > 0) printTable(results, targets.map((t) => t.name));
    if (opt('json', undefined)) writeJson(opt('json'), results);
    if (args.includes('--soak')) {
      const edge = targets.find((t) => t.name === 'pg-edge transaction');
      const savedDuration = DURATION;
      const r = await new Promise((resolve) => {
        const child = spawn('pgbench', ['-h', '127.0.0.1', '-p', String(edge.port), '-U', 'postgres', '-n', '-j', '2', '-c', '50', '-M', 'extended', '-T', '60', 'bench'], { env: { ...process.env, PGPASSWORD: PASSWORD } });
        let out = '';
        child.stdout.on('data', (c) => (out += c));
        child.stderr.on('data', (c) => (out += c));
        child.on('close', () => resolve(out));
      });
      console.log(`\nsoak: pgbench -c 50 -M extended -T 60 through the transaction pool (${savedDuration}s runs above)`);
      console.log(r.split('\n').filter((l) => /processed|failed|tps|latency/.test(l)).join('\n'));
    }
    if (!args.includes('--no-memory')) {
      // on fresh pg-edge processes: after load, a shrinking heap hides what the idle clients add
      if (results.length > 0 || args.includes('--soak')) for (const t of targets) await t.restart?.();
      await memoryPerIdleConnection(targets.filter((t) => t.pid));
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await sleep(500);
    await pg.destroy();
    for (const bus of buses) await bus.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Drives every proxy (targets with a pid) through each script and protocol for WARMUP seconds at the
 * largest client count, unmeasured, so the measured runs see its steady state: V8 compiles a hot
 * function with its optimising tier only after many calls, and PgBouncer, in C, has no such start.
 */
async function warmUp(targets) {
  if (!(WARMUP > 0)) return;
  const clients = String(Math.max(...CLIENTS));
  for (const target of targets.filter((t) => t.pid)) {
    for (const [, scriptArgs] of SCRIPTS) {
      for (const [, protocolArgs] of PROTOCOLS) await pgbench(target.port, target.user, ['-c', clients, ...protocolArgs, ...scriptArgs], {}, undefined, WARMUP);
    }
  }
  console.log(`  warmed up ${targets.filter((t) => t.pid).map((t) => t.name).join(', ')}: ${WARMUP} s each per script and protocol at ${clients} clients, unmeasured`);
}

/** dbproxy_pg_pipelined_units_total from the edge's admin /metrics. */
async function pipelinedUnits(adminPort) {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();

  // one series per process label when workers serve the connections: their sum
  let total = 0;
  for (const m of text.matchAll(/^dbproxy_pg_pipelined_units_total(?:{[^}]*})? (\d+)/gm)) total += Number(m[1]);
  return total;
}

/** Every cell as { case, target, role, tps, p95Ms, cpuUsPerOp } for tools/bench/defaults.cjs. */
function writeJson(file, results) {
  const roleOf = (name) => (name === 'PostgreSQL direct' ? 'direct' : name.startsWith('PgBouncer') ? 'peer' : 'edge');
  const cells = results.flatMap((row) =>
    Object.entries(row.cells).map(([target, r]) => ({
      case: `${row.script.startsWith('select-only') ? '-S' : 'TPC-B'} ${row.protocol} c=${row.clients}`,
      target,
      role: roleOf(target),
      tps: r.tps,
      p95Ms: r.p95,
      cpuUsPerOp: r.cpuUsPerTx,
    })),
  );
  writeFileSync(file, JSON.stringify({ bench: 'pg', unit: 'tx/s', seconds: DURATION, defaults: DEFAULTS, cells }, null, 2));
}

function printTable(results, names) {
  const direct = names.find((n) => n === 'PostgreSQL direct');
  const bouncer = 'PgBouncer (transaction)';
  const edges = names.filter((n) => n.startsWith('pg-edge'));
  const proxies = names.filter((n) => n !== direct);
  const pools = DEFAULTS ? 'shipped defaults (PgBouncer default_pool_size 20, pg-edge pool_max_per_backend 32, pipeline_depth "auto", read_after_write_seconds 2)' : `pool size ${POOL} (PgBouncer default_pool_size = pg-edge pool_max_per_backend)`;
  console.log(`\npgbench, ${DURATION} s per run, best of ${ROUNDS} interleaved rounds, scale 10, ${pools}\n`);
  const header = ['script', 'protocol', 'clients', ...names.map((n) => `${n} tps (avg / p95 ms)`), ...edges.map((n) => `${n.replace('pg-edge ', '')} / PgBouncer`), ...(direct ? proxies.map((n) => `${n.replace('pg-edge ', '')} / direct`) : [])];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);
  for (const row of results) {
    const cells = names.map((n) => `${row.cells[n].tps.toFixed(0)} (${row.cells[n].latency.toFixed(2)} / ${row.cells[n].p95.toFixed(2)})`);
    const vsBouncer = edges.map((n) => (row.cells[n].tps / row.cells[bouncer].tps).toFixed(2) + '×');
    const vsDirect = direct ? proxies.map((n) => (row.cells[n].tps / row.cells[direct].tps).toFixed(2) + '×') : [];
    console.log(`| ${[row.script, row.protocol, row.clients, ...cells, ...vsBouncer, ...vsDirect].join(' | ')} |`);
  }
}

async function memoryPerIdleConnection(proxies) {
  console.log('\nresident memory per idle client connection (VmRSS of the proxy process, after 5 warm-up connections)\n');
  console.log('| proxy | idle clients | RSS before | RSS with idle clients | per connection |');
  console.log('|---|---|---|---|---|');
  for (const proxy of proxies) {
    // Transparent sessions each hold a backend connection: the test server allows 100, and the pools hold 40.
    const count = proxy.name.endsWith('transparent') ? Math.min(IDLE, 40) : IDLE;
    const clients = new IdleClients(proxy.port, proxy.user, PASSWORD);
    try {
      await measureOne(proxy, clients, count);
    } catch (err) {
      console.log(`| ${proxy.name} | ${count} | failed: ${err.message} | | |`);
    }
    await clients.close();
    await sleep(500);
  }
}

async function measureOne(proxy, clients, count) {
  await clients.open(5);
  await sleep(1000);
  const before = treeRss(proxy.pid);
  await clients.open(count);
  await sleep(2000);
  const after = treeRss(proxy.pid);
  console.log(`| ${proxy.name} | ${count} | ${(before / 1048576).toFixed(1)} MiB | ${(after / 1048576).toFixed(1)} MiB | ${((after - before) / count / 1024).toFixed(1)} KiB |`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
