#!/usr/bin/env node
// MySQL result cache benchmark ([mysql.cache]): sysbench oltp_point_select (prepared statements)
// on one table against MariaDB directly, through mysql-edge without the cache and through
// mysql-edge with the table cached (a private Redis), in one run; then a read-mostly mix (95% point
// selects, 5% non-index updates of the same table) through the cached edge. Prints throughput,
// p95, the cached/uncached ratio, the proxy's and the cache Redis's CPU per transaction (steadier
// than throughput on a shared machine), with the load average. Never run by `npm test`.
//
// Usage: node tools/bench/mysql/cache.cjs [--duration 10] [--threads 8] [--table-size 10000]
// Starts its own MariaDB and Redis (libs/testing); runs mysql-edge from the TypeScript sources.
'use strict';
require('../sql/ts-register.cjs');
const { spawn, spawnSync } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { startMariaDb, startRedis, freePort } = require('../../../libs/testing/src/index.ts');
const { opt, waitReady, treeCpu, fmt, checkOptions, onInterrupt, loadAverage } = require('../common.cjs');

checkOptions(__filename, { values: ['duration', 'threads', 'table-size'], flags: [] });
const DURATION = Number(opt('duration', '10'));
const THREADS = Number(opt('threads', '8'));
const TABLE_SIZE = Number(opt('table-size', '10000'));

function sysbench(test, port, user, password, verb, extra = []) {
  const argv = [
    test, '--db-driver=mysql', '--mysql-host=127.0.0.1', `--mysql-port=${port}`, `--mysql-user=${user}`, `--mysql-password=${password}`,
    '--mysql-db=sbtest', '--tables=1', `--table-size=${TABLE_SIZE}`, `--threads=${THREADS}`, `--time=${DURATION}`,
    '--report-interval=0', '--percentile=95', '--rand-type=uniform', '--db-ps-mode=auto', ...extra, verb,
  ];
  const out = spawnSync('sysbench', argv, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const text = `${out.stdout}${out.stderr}`;
  if (verb !== 'run') return text;
  const tps = Number(/transactions:\s+(\d+)\s+\(([\d.]+) per sec/.exec(text)?.[2] ?? NaN);
  const count = Number(/transactions:\s+(\d+)/.exec(text)?.[1] ?? NaN);
  const p95 = Number(/95th percentile:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  const errors = Number(/errors:\s+(\d+)/.exec(text)?.[1] ?? NaN);
  if (!Number.isFinite(tps)) console.log(text.split('\n').slice(-12).join('\n'));
  return { tps, count, p95, errors };
}

async function startEdge(dir, db, redis, cached) {
  const [rw, ro, admin] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, `dbproxy-${rw}.toml`);
  const cache = cached
    ? `[mysql.cache]\nenabled = true\nredis_backend = "cache"\nttl_seconds = 300\ntables = ["sbtest.sbtest1"]\n`
    : '';
  writeFileSync(
    config,
    `[proxy.admin]\nlisten = "127.0.0.1:${admin}"\n[telemetry]\nlog_level = "warn"\n[[users]]\nname = "bench"\npassword = "bench-secret"\n` +
      `[health]\ninterval_seconds = 2\n[mysql]\nenabled = true\nread_write_listen = "127.0.0.1:${rw}"\nread_only_listen = "127.0.0.1:${ro}"\npool_max_per_backend = 40\n${cache}` +
      `[postgres]\nenabled = false\n[redis]\nenabled = false\n` +
      `[[mysql_backends]]\nname = "primary"\naddress = "127.0.0.1:${db.primary.port}"\nrole = "primary"\n` +
      `[[redis_backends]]\nname = "cache"\naddress = "127.0.0.1:${redis.primary.port}"\nrole = "primary"\n`,
  );
  const child = spawn(process.execPath, [join(__dirname, 'ts-edge-launcher.cjs'), config], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitReady(admin, 120000);
  return { child, port: rw, admin };
}

async function measure(label, edge, test, extra = []) {
  const before = edge ? treeCpu(edge.child.pid) : null;
  const redisBefore = treeCpu(REDIS_PID);
  const r = edge ? sysbench(test, edge.port, 'bench', 'bench-secret', 'run', extra) : sysbench(test, DIRECT.port, 'root', '', 'run', extra);
  const cpu = edge ? treeCpu(edge.child.pid) : null;
  const redisCpu = treeCpu(REDIS_PID);
  const perTx = cpu ? ((cpu.user + cpu.system - before.user - before.system) / r.count) * 1e6 : NaN;
  const redisPerTx = ((redisCpu.user + redisCpu.system - redisBefore.user - redisBefore.system) / r.count) * 1e6;
  const shown = (v) => (Number.isFinite(v) ? v.toFixed(0) : '-');
  console.log(`${label.padEnd(44)} ${fmt(r.tps).padStart(10)} tps  p95 ${String(r.p95).padStart(6)} ms  errors ${r.errors}  proxy CPU ${shown(perTx)} µs/tx  cache Redis CPU ${edge ? shown(redisPerTx) : '-'} µs/tx`);
  return r;
}

let DIRECT;
let REDIS_PID;
async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'dbproxy-cache-bench-'));
  const [db, redis] = await Promise.all([startMariaDb({ replicas: 0, settings: { 'innodb-buffer-pool-size': '256M' } }), startRedis()]);
  DIRECT = db.primary;
  REDIS_PID = redis.primary.pid;
  const edges = [];
  onInterrupt(() => Promise.all([db.destroy(), redis.destroy()]));
  try {
    spawnSync('mariadb', ['-h', '127.0.0.1', '-P', String(db.primary.port), '-u', 'root', '-e', 'CREATE DATABASE sbtest'], { encoding: 'utf8' });
    sysbench('oltp_point_select', db.primary.port, 'root', '', 'prepare');
    const uncached = await startEdge(dir, db, redis, false);
    const cached = await startEdge(dir, db, redis, true);
    edges.push(uncached, cached);
    console.log(`sysbench, ${THREADS} threads, ${DURATION} s per run, 1 table of ${TABLE_SIZE} rows; load average before: ${loadAverage()}`);
    // warm the cache (and the buffer pool) once: every row read through the cached edge
    await measure('warm-up (cached edge)', cached, 'oltp_point_select');
    const direct = await measure('oltp_point_select MariaDB directly', null, 'oltp_point_select');
    const plain = await measure('oltp_point_select mysql-edge, no cache', uncached, 'oltp_point_select');
    const hit = await measure('oltp_point_select mysql-edge, cached', cached, 'oltp_point_select');
    const mix = ['--point-selects=19', '--simple-ranges=0', '--sum-ranges=0', '--order-ranges=0', '--distinct-ranges=0', '--index-updates=0', '--non-index-updates=1', '--delete-inserts=0', '--skip-trx=on'];
    const mixPlain = await measure('95/5 mix mysql-edge, no cache', uncached, 'oltp_read_write', mix);
    const mixCached = await measure('95/5 mix mysql-edge, cached', cached, 'oltp_read_write', mix);
    console.log(`cached / uncached point selects through the edge: ${(hit.tps / plain.tps).toFixed(2)}x; cached edge / direct: ${(hit.tps / direct.tps).toFixed(2)}x; 95/5 mix cached / uncached: ${(mixCached.tps / mixPlain.tps).toFixed(2)}x`);
    const report = await (await fetch(`http://127.0.0.1:${cached.admin}/mysql/cache`)).json();
    console.log(`GET /mysql/cache: hit_ratio ${report.hit_ratio.toFixed(3)}, hits ${report.hits}, misses ${report.misses}, fills ${report.fills}, invalidations ${report.invalidations}; load average after: ${loadAverage()}`);
  } finally {
    for (const e of edges) e.child.kill('SIGTERM');
    await Promise.all([db.destroy(), redis.destroy()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
