#!/usr/bin/env node
// MySQL benchmark: sysbench oltp_point_select and oltp_read_only (prepared statements, 8 and 32
// threads) against MariaDB directly, through haproxy (TCP mode) and through mysql-edge, in one run
// (the three targets interleaved per test); prints throughput, p95 latency and the ratios, then the
// resident memory of mysql-edge holding 2,000 idle authenticated client connections.
// Never run by `npm test`.
//
// Usage: node tools/bench/mysql/bench.cjs --sharded ...   two shards, see tools/bench/mysql/sharded.cjs
//        node tools/bench/mysql/bench.cjs [--duration 10] [--quick] [--rounds 1] [--workers 1] [--idle 2000] [--soak [--soak-only]]
//                                          [--point-select] [--edge-node-args "--cpu-prof --cpu-prof-dir=/tmp/p"]
//   --quick    3 s per run;  --workers N  mysql-edge worker processes (N > 1 starts a nats-server)
//   --memory-only  only the idle-memory figure (always measured on a freshly started mysql-edge)
//   --point-select  iteration run: only oltp_point_select (8 and 32 threads) through haproxy and
//              mysql-edge, no idle-memory measurement; prints the CPU per transaction (from /proc)
//              of the proxy (user/system), sysbench and the MariaDB servers
//   --direct   with --point-select: MariaDB directly too (its row has no proxy CPU)
//   --threads 8,32  the sysbench thread counts (comma-separated)
//   --json FILE  also write every cell (tps, p95 ms, proxy CPU µs/tx with --point-select) to FILE as JSON
//              (tools/bench/defaults.cjs reads it)
//   --edge-node-args  extra node options for the mysql-edge process (profiling); its pid is printed
//   --pipeline-depth N  also a mysql-edge with [mysql] pipeline_depth = N and a pool of --pipeline-pool
//              connections per backend (default 8): prints the share of statements pipelined
//   --defaults mysql-edge with its shipped defaults: its configuration names only listeners, users and
//              backends (pool_max_per_backend, max_connections, pipeline_depth, workers as shipped);
//              not combined with --workers or --pipeline-depth
//   --warmup S unmeasured seconds of oltp_point_select per target at the largest thread count before the measured runs
//              (default 2; 0: none): a fresh Node process runs its hot paths unoptimised at first
//   --rounds N each measurement N times, interleaved, best kept (the machine is shared and noisy)
//   --soak     also sysbench oltp_read_write, 32 threads, 60 s, through mysql-edge (with --pipeline-depth:
//              pipelined, pool of --pipeline-pool): autocommit
//              (reads on the replica, read_after_write_seconds = 0) and in transactions; zero errors
//              expected; prints per-backend query counters and the replica's own executes
//   --causal   (alone) sysbench oltp_read_write, autocommit, 16 threads, --duration s, through a mysql-edge
//              with read_consistency = "window" (read_after_write_seconds = 2) and one with "causal"
//              (causal_wait_ms = 200), interleaved --rounds times: tps, share of reads on the replica,
//              causal outcomes, proxy CPU per transaction
// Starts its own MariaDB primary + replica (libs/testing), installs sysbench and haproxy with
// apt-get when missing, runs mysql-edge + topology from dist/ (build first with `npm run build`).
'use strict';
require('../sql/ts-register.cjs');
const { spawn, spawnSync, execFileSync } = require('node:child_process');
const { mkdtempSync, writeFileSync, readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { startMariaDb, startNats, freePort } = require('../../../libs/testing/src/index.ts');
const { args, opt, sleep, ensureInstalled, waitPort, waitReady, cpuSeconds, treeCpu, treeRss, fmt, checkOptions, onInterrupt } = require('../common.cjs');

const SHARDED = args.includes('--sharded');
if (!SHARDED) checkOptions(__filename, { values: ['warmup', 'json', 'threads', 'duration', 'rounds', 'workers', 'idle', 'edge-node-args', 'pipeline-depth', 'pipeline-pool'], flags: ['quick', 'soak', 'soak-only', 'point-select', 'memory-only', 'defaults', 'direct', 'causal'] });
const DEFAULTS = args.includes('--defaults');
if (DEFAULTS && ['--workers', '--pipeline-depth', '--pipeline-pool'].some((o) => args.includes(o))) {
  console.error('--defaults runs the shipped defaults: it does not take --workers, --pipeline-depth or --pipeline-pool');
  process.exit(2);
}

const DURATION = args.includes('--quick') ? 3 : Number(opt('duration', '10'));
const ROUNDS = Number(opt('rounds', '1'));
/** Unmeasured seconds of oltp_point_select per target before the measured runs (--warmup). */
const WARMUP = Number(opt('warmup', '2'));
const WORKERS = Number(opt('workers', '1'));
const IDLE = Number(opt('idle', '2000'));
const SOAK = args.includes('--soak') || args.includes('--soak-only');
const SOAK_ONLY = args.includes('--soak-only');
const POINT_SELECT = args.includes('--point-select');
/** Only the idle-memory figure, on a freshly started edge (after load, a shrinking heap hides what the idle connections add). */
const MEMORY_ONLY = args.includes('--memory-only');
const EDGE_NODE_ARGS = (opt('edge-node-args', '') ?? '').split(' ').filter(Boolean);
const PIPELINE_DEPTH = Number(opt('pipeline-depth', '0'));
const PIPELINE_POOL = Number(opt('pipeline-pool', '8'));
const THREADS = opt('threads', '8,32').split(',').map(Number);
const JSON_FILE = opt('json', undefined);
const TABLES = 4;
const TABLE_SIZE = 20000;

function sysbench(test, target, threads, verb = 'run', extra = []) {
  const argv = [
    test,
    '--db-driver=mysql',
    '--mysql-host=127.0.0.1',
    `--mysql-port=${target.port}`,
    `--mysql-user=${target.user}`,
    `--mysql-password=${target.password}`,
    '--mysql-db=sbtest',
    `--tables=${TABLES}`,
    `--table-size=${TABLE_SIZE}`,
    `--threads=${threads}`,
    `--time=${DURATION}`,
    '--report-interval=0',
    '--percentile=95',
    '--rand-type=uniform',
    '--db-ps-mode=auto',
    ...extra,
    verb,
  ];
  const out = spawnSync('sysbench', argv, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const text = `${out.stdout}${out.stderr}`;
  if (verb !== 'run') return text;
  const tps = Number(/transactions:\s+\d+\s+\(([\d.]+) per sec/.exec(text)?.[1] ?? NaN);
  const qps = Number(/queries:\s+\d+\s+\(([\d.]+) per sec/.exec(text)?.[1] ?? NaN);
  const p95 = Number(/95th percentile:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  const errors = Number(/errors:\s+(\d+)/.exec(text)?.[1] ?? NaN);
  if (!Number.isFinite(tps)) console.log(text.split('\n').slice(-12).join('\n'));
  return { tps, qps, p95, errors };
}

/** Pids of the mariadbd processes listening on `ports`. */
function mariadbPids(ports) {
  const out = spawnSync('pgrep', ['-f', 'mariadbd'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return out.map(Number).filter((pid) => {
    try {
      return ports.some((port) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`--port=${port}\0`));
    } catch {
      return false;
    }
  });
}

/** CPU seconds (user + system) of the proxy (with its worker processes), sysbench (this process's children) and the MariaDB servers. */
function chainCpu(proxyPid, dbPids) {
  const total = (c) => c.user + c.system;
  return { proxy: proxyPid ? treeCpu(proxyPid) : { user: NaN, system: NaN }, sysbench: total(cpuSeconds(process.pid, true)), mariadb: dbPids.reduce((sum, pid) => sum + total(cpuSeconds(pid)), 0) };
}

async function startHaproxy(dir, backendPort, port) {
  const config = join(dir, 'haproxy.cfg');
  writeFileSync(
    config,
    `global\n  maxconn 4000\ndefaults\n  mode tcp\n  timeout connect 5s\n  timeout client 1h\n  timeout server 1h\nlisten mysql\n  bind 127.0.0.1:${port}\n  server primary 127.0.0.1:${backendPort}\n`,
  );
  const child = spawn(ensureInstalled('haproxy'), ['-f', config, '-db'], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitPort(port, 60000);
  return child;
}

async function startEdge(dir, db, natsUrl, extraMysql = '', poolMax = 40) {
  const [rw, ro, admin] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, `dbproxy-${rw}.toml`);
  writeFileSync(
    config,
    `[proxy.admin]\nlisten = "127.0.0.1:${admin}"\n[telemetry]\nlog_level = "warn"\n${natsUrl ? `[bus]\nnats_url = "${natsUrl}"\n` : ''}` +
      `[[users]]\nname = "bench"\npassword = "bench-secret"\n` +
      `[health]\ninterval_seconds = 2\n[mysql]\nenabled = true\n${DEFAULTS ? '' : `workers = ${WORKERS}\n`}read_write_listen = "127.0.0.1:${rw}"\nread_only_listen = "127.0.0.1:${ro}"\n${DEFAULTS ? '' : `max_connections = ${IDLE + 200}\npool_max_per_backend = ${poolMax}\n`}${extraMysql}` +
      `[postgres]\nenabled = false\n[redis]\nenabled = false\n` +
      `[[mysql_backends]]\nname = "primary"\naddress = "127.0.0.1:${db.primary.port}"\nrole = "primary"\nreserved_pool = 8\n` +
      `[[mysql_backends]]\nname = "replica"\naddress = "127.0.0.1:${db.replicas[0].port}"\nrole = "replica"\n`,
  );
  const child = spawn(process.execPath, [...EDGE_NODE_ARGS, join(__dirname, 'edge-launcher.cjs'), config], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (EDGE_NODE_ARGS.length > 0) console.log(`mysql-edge pid ${child.pid} (${EDGE_NODE_ARGS.join(' ')})`);
  await waitReady(admin, 60000).catch(() => {
    throw new Error('mysql-edge did not become ready');
  });
  return { child, port: rw, admin };
}

async function idleMemory(edge) {
  const before = treeRss(edge.child.pid);
  const child = spawn(process.execPath, [join(__dirname, 'idle-clients.cjs'), String(edge.port), 'bench', 'bench-secret', String(IDLE)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve) => child.stdout.once('data', (c) => resolve(String(c).trim())));
  if (!line.startsWith('ready')) throw new Error(`idle clients: ${line}`);
  await sleep(3000);
  const after = treeRss(edge.child.pid);
  child.stdin.end();
  await new Promise((r) => child.once('exit', r));
  return { before, after, perConnection: (after - before) / IDLE };
}

/** Every cell as { case, target, role, tps, p95Ms, cpuUsPerOp } for tools/bench/defaults.cjs. */
function writeJson(file, rows, targets) {
  const roleOf = (name) => (name === 'MariaDB' ? 'direct' : name === 'haproxy' ? 'peer' : 'edge');
  const cells = rows.flatMap((row) =>
    targets.map((t) => {
      const r = row[t.name];
      return { case: `${row.test} ${row.threads} threads`, target: t.name === 'MariaDB' ? 'MariaDB direct' : t.name, role: roleOf(t.name), tps: r.tps, p95Ms: r.p95, cpuUsPerOp: r.cpuUsPerOp ?? NaN, errors: r.errors };
    }),
  );
  writeFileSync(file, JSON.stringify({ bench: 'mysql', unit: 'tx/s', seconds: DURATION, defaults: DEFAULTS, cells }, null, 2));
}

function metric(text, name, labels) {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Statements run and statements pipelined so far (the admin's /metrics). */
async function pipelineCounts(admin) {
  const text = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
  return { queries: metric(text, 'dbproxy_mysql_queries_total', {}), pipelined: metric(text, 'dbproxy_mysql_pipelined_queries_total', {}), waits: metric(text, 'dbproxy_mysql_pool_waits_total', {}), returned: metric(text, 'dbproxy_mysql_pool_resets_total', {}) };
}

function replicaExecutes(db) {
  const out = execFileSync('mariadb', ['-h', '127.0.0.1', '-P', String(db.replicas[0].port), '-u', 'root', '-N', '-e', "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'"], { encoding: 'utf8' });
  return Number(out.trim().split(/\s+/)[1]);
}

/** 60 s of oltp_read_write through a mysql-edge with read_after_write_seconds = 0: autocommit, then in transactions. */
async function soak(dir, db, natsUrl) {
  const piped = PIPELINE_DEPTH > 1;
  const edge = await startEdge(dir, db, natsUrl, `read_after_write_seconds = 0\n${piped ? `pipeline_depth = ${PIPELINE_DEPTH}\n` : ''}`, piped ? PIPELINE_POOL : 40);
  if (piped) console.log(`soak through mysql-edge with pipeline_depth = ${PIPELINE_DEPTH} and a pool of ${PIPELINE_POOL}`);
  const target = { name: 'mysql-edge', port: edge.port, user: 'bench', password: 'bench-secret' };
  try {
    for (const [label, extra] of [['autocommit (--skip_trx=on --delete_inserts=0: without transactions the DELETE + INSERT pair races between threads)', ['--skip_trx=on', '--delete_inserts=0', '--time=60']], ['transactions', ['--time=60']]]) {
      const before = await (await fetch(`http://127.0.0.1:${edge.admin}/metrics`)).text();
      const executes = replicaExecutes(db);
      const r = sysbench('oltp_read_write', target, 32, 'run', extra);
      const after = await (await fetch(`http://127.0.0.1:${edge.admin}/metrics`)).text();
      const delta = (route, backend) => metric(after, 'dbproxy_mysql_queries_total', { route, backend }) - metric(before, 'dbproxy_mysql_queries_total', { route, backend });
      const pipelined = metric(after, 'dbproxy_mysql_pipelined_queries_total', {}) - metric(before, 'dbproxy_mysql_pipelined_queries_total', {});
      console.log(
        `soak oltp_read_write 32 threads 60 s ${label}: ${fmt(r.tps, 1)} tps, p95 ${fmt(r.p95, 2)} ms, errors ${r.errors}; ` +
          `replica reads ${delta('replica', 'replica')}, primary ${delta('primary', 'primary')}, pinned ${delta('pinned', 'primary')}; replica executed ${replicaExecutes(db) - executes} statements` +
          (piped ? `; ${pipelined} statements pipelined` : ''),
      );
    }
  } finally {
    edge.child.kill('SIGTERM');
    await new Promise((r) => edge.child.once('exit', r));
  }
}

/** oltp_read_write (autocommit) through the window mode and the causal mode: where the reads ran, tps, proxy CPU. */
async function causalComparison(dir, db) {
  const modes = [
    ['window (read_after_write_seconds = 2)', 'read_consistency = "window"\nread_after_write_seconds = 2\n'],
    ['causal (causal_wait_ms = 200)', 'read_consistency = "causal"\ncausal_wait_ms = 200\n'],
  ];
  const edges = [];
  for (const [label, toml] of modes) edges.push({ label, edge: await startEdge(dir, db, undefined, toml) });
  const extra = ['--skip_trx=on', '--delete_inserts=0'];
  try {
    for (const { edge } of edges) sysbench('oltp_read_write', { port: edge.port, user: 'bench', password: 'bench-secret' }, 16, 'run', [...extra, '--time=3']); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const { label, edge } of edges) {
        const before = await (await fetch(`http://127.0.0.1:${edge.admin}/metrics`)).text();
        const cpu0 = treeCpu(edge.child.pid);
        const r = sysbench('oltp_read_write', { port: edge.port, user: 'bench', password: 'bench-secret' }, 16, 'run', extra);
        const cpu1 = treeCpu(edge.child.pid);
        const cpu = cpu1.user + cpu1.system - cpu0.user - cpu0.system;
        const after = await (await fetch(`http://127.0.0.1:${edge.admin}/metrics`)).text();
        const delta = (name, labels) => metric(after, name, labels) - metric(before, name, labels);
        const replicaReads = delta('dbproxy_mysql_queries_total', { role: 'replica' });
        const primaryReads = delta('dbproxy_mysql_queries_total', { route: 'read_after_write' }) + delta('dbproxy_mysql_queries_total', { route: 'fallback' });
        const outcomes = ['replica_now', 'replica_after_wait', 'primary'].map((o) => `${o} ${delta('dbproxy_causal_reads_total', { outcome: o })}`).join(', ');
        console.log(
          `round ${round + 1} ${label}: ${fmt(r.tps, 1)} tps, p95 ${fmt(r.p95, 2)} ms, errors ${r.errors}; reads on the replica ${replicaReads}, ` +
            `replica-safe reads sent to the primary ${primaryReads} (replica share ${fmt((100 * replicaReads) / Math.max(1, replicaReads + primaryReads), 1)} %); ` +
            `causal outcomes: ${outcomes}; proxy CPU ${fmt((cpu * 1e6) / Math.max(1, r.tps * DURATION), 0)} µs per transaction`,
        );
      }
    }
  } finally {
    for (const { edge } of edges) {
      edge.child.kill('SIGTERM');
      await new Promise((res) => edge.child.once('exit', res));
    }
  }
}

async function main() {
  ensureInstalled('sysbench');
  ensureInstalled('haproxy');
  const dir = mkdtempSync(join(tmpdir(), 'dbproxy-bench-mysql-'));
  onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
  // the sysbench tables (~20 MiB) in memory: the test servers' 16 MiB buffer pool made every
  // proxy's point selects pay for page misses in MariaDB
  const db = await startMariaDb({ replicas: 1, settings: { 'innodb-buffer-pool-size': '256M' } });
  const nats = WORKERS > 1 ? await startNats() : undefined;
  // each mysql-edge its own bus: edges on one bus share configuration epochs
  const pipedNats = WORKERS > 1 && PIPELINE_DEPTH > 1 ? await startNats() : undefined;
  let haproxy;
  let edge;
  let piped;
  try {
    execFileSync('mariadb', ['-h', '127.0.0.1', '-P', String(db.primary.port), '-u', 'root', '-e', 'CREATE DATABASE sbtest']);
    const direct = { name: 'MariaDB', port: db.primary.port, user: 'root', password: '' };
    console.log(`preparing ${TABLES} x ${TABLE_SIZE} rows...`);
    sysbench('oltp_read_only', direct, 4, 'prepare');
    await db.waitForReplicaCatchUp({ timeoutMs: 120000 });
    if (args.includes('--causal')) {
      console.log(`load average ${require('node:os').loadavg().map((l) => l.toFixed(2)).join(' ')}`);
      return await causalComparison(dir, db);
    }
    if (SOAK) await soak(dir, db, nats?.url);
    if (SOAK_ONLY) return;
    const haproxyPort = await freePort();
    haproxy = await startHaproxy(dir, db.primary.port, haproxyPort);
    edge = await startEdge(dir, db, nats?.url);
    const pipedName = `mysql-edge pipeline ${PIPELINE_DEPTH} pool ${PIPELINE_POOL}`;
    if (PIPELINE_DEPTH > 1) piped = await startEdge(dir, db, pipedNats?.url, `pipeline_depth = ${PIPELINE_DEPTH}\n`, PIPELINE_POOL);
    const proxied = [
      { name: 'haproxy', port: haproxyPort, user: 'root', password: '', pid: haproxy.pid },
      { name: 'mysql-edge', port: edge.port, user: 'bench', password: 'bench-secret', pid: edge.child.pid, ...(DEFAULTS ? { admin: edge.admin } : {}) },
      ...(piped ? [{ name: pipedName, port: piped.port, user: 'bench', password: 'bench-secret', pid: piped.child.pid, admin: piped.admin }] : []),
    ];
    const targets = POINT_SELECT && !args.includes('--direct') ? proxied : [direct, ...proxied];
    const dbPids = POINT_SELECT ? mariadbPids([db.primary.port, db.replicas[0].port]) : [];
    if (!MEMORY_ONLY && WARMUP > 0) for (const t of targets) sysbench('oltp_point_select', { ...t }, Math.max(...THREADS), 'run', [`--time=${WARMUP}`]); // warm-up, unmeasured
    const rows = [];
    const tests = MEMORY_ONLY ? [] : POINT_SELECT ? ['oltp_point_select'] : ['oltp_point_select', 'oltp_read_only'];
    for (const test of tests) {
      for (const threads of THREADS) {
        const best = {};
        for (let round = 0; round < ROUNDS; round++) {
          for (const t of targets) {
            const cpu = POINT_SELECT ? chainCpu(t.pid, dbPids) : null;
            const counted = t.admin ? await pipelineCounts(t.admin) : null;
            const r = sysbench(test, t, threads);
            if (counted) {
              const now = await pipelineCounts(t.admin);
              const share = (100 * (now.pipelined - counted.pipelined)) / Math.max(1, now.queries - counted.queries);
              const waited = (100 * (now.waits - counted.waits)) / Math.max(1, now.queries - counted.queries);
              const returned = (100 * (now.returned - counted.returned)) / Math.max(1, now.queries - counted.queries);
              console.log(`  ${t.name} ${threads} threads: ${fmt(share, 1)} % of statements pipelined, ${fmt(waited, 1)} % waited for a pooled connection, ${fmt(returned, 1)} % returned their connection to the pool`);
            }
            if (cpu) {
              const now = chainCpu(t.pid, dbPids);
              const per = (seconds) => fmt((seconds * 1e6) / (r.tps * DURATION), 1);
              r.cpuUsPerOp = ((now.proxy.user - cpu.proxy.user + now.proxy.system - cpu.proxy.system) * 1e6) / (r.tps * DURATION);
              console.log(
                `  ${t.name} ${threads} threads: ${fmt(r.tps)} tps; CPU µs per transaction: proxy ${per(now.proxy.user - cpu.proxy.user)} user + ${per(now.proxy.system - cpu.proxy.system)} system, ` +
                  `sysbench ${per(now.sysbench - cpu.sysbench)}, MariaDB ${per(now.mariadb - cpu.mariadb)}`,
              );
            }
            if (!best[t.name] || r.tps > best[t.name].tps) best[t.name] = r;
          }
        }
        if (!best['MariaDB']) best['MariaDB'] = { tps: NaN, p95: NaN, errors: NaN };
        rows.push({ test, threads, ...best });
        const line = targets.map((t) => `${t.name} ${fmt(best[t.name].tps)} tps p95 ${fmt(best[t.name].p95, 2)} ms err ${best[t.name].errors}`).join(' | ');
        console.log(`${test} ${threads} threads: ${line}`);
      }
    }
    if (JSON_FILE) writeJson(JSON_FILE, rows, targets);
    const pipedHead = piped ? ` ${pipedName} tps (p95 ms) | pipelined/haproxy |` : '';
    if (rows.length > 0) console.log(`\n| test | threads | MariaDB tps (p95 ms) | haproxy tps (p95 ms) | mysql-edge tps (p95 ms) | edge/haproxy | edge/direct | haproxy/direct |${pipedHead}`);
    if (rows.length > 0) console.log(`|---|---|---|---|---|---|---|---|${piped ? '---|---|' : ''}`);
    for (const r of rows) {
      const [d, h, e, p] = [r['MariaDB'], r['haproxy'], r['mysql-edge'], r[pipedName]];
      console.log(
        `| ${r.test} | ${r.threads} | ${fmt(d.tps)} (${fmt(d.p95, 2)}) | ${fmt(h.tps)} (${fmt(h.p95, 2)}) | ${fmt(e.tps)} (${fmt(e.p95, 2)}) | ${fmt(e.tps / h.tps, 2)}x | ${fmt(e.tps / d.tps, 2)}x | ${fmt(h.tps / d.tps, 2)}x |` +
          (p ? ` ${fmt(p.tps)} (${fmt(p.p95, 2)}) | ${fmt(p.tps / h.tps, 2)}x |` : ''),
      );
    }
    if (POINT_SELECT) return;
    // on a freshly started edge: after the runs above its heap shrinks while the clients connect
    if (!MEMORY_ONLY) {
      edge.child.kill('SIGTERM');
      await new Promise((r) => edge.child.once('exit', r));
      edge = await startEdge(dir, db, nats?.url);
    }
    const memory = await idleMemory(edge);
    console.log(
      `\nmysql-edge (${WORKERS} process${WORKERS > 1 ? 'es' : ''}) with ${IDLE} idle authenticated connections: RSS ${fmt(memory.before / 1048576, 1)} MiB -> ${fmt(memory.after / 1048576, 1)} MiB = ${fmt(memory.perConnection / 1024, 1)} KiB per connection`,
    );
  } finally {
    haproxy?.kill('SIGTERM');
    edge?.child.kill('SIGTERM');
    piped?.child.kill('SIGTERM');
    await sleep(500);
    await db.destroy();
    await nats?.destroy();
    await pipedNats?.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (SHARDED) require('./sharded.cjs');
else
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
