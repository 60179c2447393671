#!/usr/bin/env node
// Every edge with its shipped defaults, beside its peer and the direct connection, in one command:
// runs tools/bench/pg, tools/bench/mysql and tools/bench/redis in turn with --defaults and prints one
// table of throughput, p95 latency, proxy CPU per operation and the ratios to the peer and to direct.
//   pg:    pgbench -S, 50 and 10 clients, simple and extended: PostgreSQL direct, PgBouncer (transaction),
//          pg-edge transparent and transaction
//   mysql: sysbench oltp_point_select, 32 threads: MariaDB direct, haproxy (TCP), mysql-edge
//   redis: redis-benchmark GET and SET, -P 1, 50 clients: Redis direct, twemproxy, redis-edge connection
//          and command mode
// Never run by `npm test`; build first (`npm run build`). Warns when the 1-minute load average is 1 or
// more before it starts: the figures are quoted from a quiet machine.
//
// Usage: node tools/bench/defaults.cjs [--quick] [--only pg,mysql,redis] [--keep DIR]
//   --quick  3 s per pg/mysql run, 50,000 redis requests per test (the benches' own --quick)
//   --only   run only these benches (comma-separated)
//   --keep DIR  leave each bench's JSON cells (pg.json, mysql.json, redis.json) in DIR
'use strict';
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, existsSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir, loadavg } = require('node:os');
const { args, opt, checkOptions, fmt, ratio, loadAverage, onInterrupt } = require('./common.cjs');

checkOptions(__filename, { values: ['only', 'keep'], flags: ['quick'] });

const QUICK = args.includes('--quick') ? ['--quick'] : [];
const ONLY = opt('only', 'pg,mysql,redis').split(',');
const BENCHES = [
  { name: 'pg', edge: 'pg-edge', argv: ['--defaults', '--select-only', '--clients', '50,10', '--protocols', 'simple,extended', '--rounds', '1', '--no-memory'] },
  { name: 'mysql', edge: 'mysql-edge', argv: ['--defaults', '--point-select', '--direct', '--threads', '32', '--rounds', '1'] },
  { name: 'redis', edge: 'redis-edge', argv: ['--defaults', '--pipelines', '1'] },
].filter((b) => ONLY.includes(b.name));

/** The edge's mode from a target name ("pg-edge transaction" → "transaction"); the peer's own mode. */
function modeOf(target) {
  if (target.startsWith('PgBouncer')) return 'transaction pool';
  if (target === 'haproxy') return 'tcp';
  if (target === 'twemproxy') return 'proxy';
  const mode = /^\S+-edge (\S+)/.exec(target)?.[1];
  return mode ?? (target.endsWith('-edge') ? 'default' : '-');
}

function runBench(bench, jsonFile) {
  const script = join(__dirname, bench.name, 'bench.cjs');
  const argv = [script, ...bench.argv, ...QUICK, '--json', jsonFile];
  console.log(`\n=== ${bench.name}: node ${argv.map((a) => a.replace(__dirname, 'tools/bench')).join(' ')} (load average ${loadAverage()})`);
  const run = spawnSync(process.execPath, argv, { stdio: 'inherit' });
  if (run.status !== 0 || !existsSync(jsonFile)) {
    console.log(`=== ${bench.name}: bench failed (exit ${run.status ?? run.signal}); its rows are missing below`);
    return [];
  }
  return JSON.parse(readFileSync(jsonFile, 'utf8')).cells.map((cell) => ({ ...cell, edge: bench.edge }));
}

/** One row per target of each case: direct, peer, then the edges, with the edges' and the peer's ratios. */
function printTable(cells) {
  const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);
  const header = ['edge', 'case', 'target', 'role', 'mode', 'throughput/s', 'p95 ms', 'proxy CPU µs/op', 'vs peer', 'vs direct', 'CPU vs peer'];
  console.log(`\n| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);
  const order = { direct: 0, peer: 1, floor: 2, edge: 3 };
  const cases = [...new Set(cells.map((c) => `${c.edge}\u0000${c.case}`))];
  for (const key of cases) {
    const group = cells.filter((c) => `${c.edge}\u0000${c.case}` === key).sort((a, b) => order[a.role] - order[b.role]);
    const peer = group.find((c) => c.role === 'peer');
    const direct = group.find((c) => c.role === 'direct');
    for (const c of group) {
      const vsPeer = c.role === 'edge' && peer ? ratio(num(c.tps), num(peer.tps)) : '-';
      const vsDirect = c.role !== 'direct' && direct ? ratio(num(c.tps), num(direct.tps)) : '-';
      const cpuVsPeer = c.role === 'edge' && peer && Number.isFinite(num(peer.cpuUsPerOp)) ? ratio(num(c.cpuUsPerOp), num(peer.cpuUsPerOp)) : '-';
      const cpu = Number.isFinite(num(c.cpuUsPerOp)) ? fmt(num(c.cpuUsPerOp), 1) : '-';
      console.log(`| ${[c.edge, c.case, c.target, c.role, modeOf(c.target), fmt(num(c.tps)), fmt(num(c.p95Ms), 2), cpu, vsPeer, vsDirect, cpuVsPeer].join(' | ')} |`);
    }
  }
}

function main() {
  const startLoad = loadavg()[0];
  console.log(`load average before: ${loadAverage()}`);
  if (startLoad >= 1) console.log(`WARNING: 1-minute load average ${startLoad.toFixed(2)} ≥ 1: the machine is not quiet; throughput and p95 are noisy (proxy CPU per operation is steadier)`);
  const keep = opt('keep', undefined);
  if (keep) mkdirSync(keep, { recursive: true });
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'dbproxy-bench-defaults-'));
  if (!keep) onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
  const cells = [];
  try {
    for (const bench of BENCHES) cells.push(...runBench(bench, join(dir, `${bench.name}.json`)));
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n=== shipped defaults, every edge beside its peer and direct${QUICK.length ? ' (--quick)' : ''}; load average before ${startLoad.toFixed(2)}, after ${loadAverage()}`);
  console.log('throughput: pg and mysql transactions/s, redis operations/s; proxy CPU from /proc (user + system) per operation (redis: over its GET and SET runs together)');
  printTable(cells);
  if (cells.length === 0) process.exitCode = 1;
}

main();
