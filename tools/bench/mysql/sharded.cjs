// Sharded MySQL benchmark (node tools/bench/mysql/bench.cjs --sharded): sysbench oltp_point_select
// and oltp_read_write over sbtest1 hash-sharded on id across two MariaDB primaries (each with a
// replica) through mysql-edge, against one MariaDB holding every row directly, in one run; then
// the routing cost per statement from the classification cache (in process, libs/sql + the edge's
// shard target), target <= 5 µs. Never run by `npm test`.
//
// Usage: node tools/bench/mysql/bench.cjs --sharded [--duration 5] [--threads 8] [--rows 20000] [--routing-only]
//          [--unsharded] [--edge-node-args "--cpu-prof --cpu-prof-dir=/tmp/p"]
//   --routing-only  only the in-process routing-cost microbenchmark (no servers)
//   --unsharded     also run an unsharded mysql-edge over shard s0's primary + replica (the same
//                   process cost without sharding; its point selects find half the ids missing)
//   --edge-node-args  extra node options for the mysql-edge processes (profiling); pids are printed
// Prints the edge's CPU µs per statement (user + system, from /proc) next to each tps figure.
// oltp_read_write runs with --skip_trx=on --range_selects=off --delete_inserts=0: a sysbench
// transaction touches random ids on both shards (refused inside one transaction: fail closed), its
// range selects need ORDER BY / SUM / DISTINCT across shards (refused), and without transactions the
// DELETE + INSERT pair races between threads. Needs `npm run build` (mysql-edge runs from dist/).
'use strict';
require('../sql/ts-register.cjs');
const { spawn, spawnSync, execFileSync } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { startMariaDb, freePort } = require('../../../libs/testing/src/index.ts');
const { opt, sleep, ensureInstalled, waitReady, treeCpu, fmt, checkOptions, onInterrupt } = require('../common.cjs');

checkOptions(join(__dirname, 'sharded.cjs'), { values: ['duration', 'threads', 'rows', 'edge-node-args'], flags: ['sharded', 'routing-only', 'unsharded'] });
const ROUTING_ONLY = process.argv.includes('--routing-only');
const UNSHARDED = process.argv.includes('--unsharded');
const EDGE_NODE_ARGS = (opt('edge-node-args', '') ?? '').split(' ').filter(Boolean);

const DURATION = Number(opt('duration', '5'));
const THREADS = Number(opt('threads', '8'));
const ROWS = Number(opt('rows', '20000'));
const RW_OPTIONS = ['--skip_trx=on', '--range_selects=off', '--delete_inserts=0'];

function sysbench(test, target, verb, extra = []) {
  const argv = [
    test,
    '--db-driver=mysql',
    '--mysql-host=127.0.0.1',
    `--mysql-port=${target.port}`,
    `--mysql-user=${target.user}`,
    `--mysql-password=${target.password}`,
    '--mysql-db=sbtest',
    '--tables=1',
    `--table-size=${ROWS}`,
    `--threads=${THREADS}`,
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
  const errors = Number(/ignored errors:\s+(\d+)/.exec(text)?.[1] ?? NaN);
  if (!Number.isFinite(tps) || out.status !== 0) console.log(text.split('\n').slice(-12).join('\n'));
  return { tps, qps, p95, errors };
}

const sql = (server, statement) => execFileSync('mariadb', ['-h', '127.0.0.1', '-P', String(server.port), '-u', 'root', '-N', '-e', statement], { encoding: 'utf8' });

/** sbtest1 on a shard: sysbench's own table and rows, then only the ids the hash map puts there (id mod 2). */
async function prepareShard(group, index) {
  sql(group.primary, 'CREATE DATABASE sbtest');
  sysbench('oltp_point_select', { port: group.primary.port, user: 'root', password: '' }, 'prepare');
  sql(group.primary, `DELETE FROM sbtest.sbtest1 WHERE MOD(id, 2) <> ${index}`);
  await group.waitForReplicaCatchUp({ timeoutMs: 120000 });
}

/** mysql-edge over `shards` (each primary + replica); `sharded` false: one unsharded backend pair (shards[0]). */
async function startEdge(dir, shards, sharded = true) {
  const [rw, ro, admin] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, `dbproxy-${sharded ? 'sharded' : 'unsharded'}.toml`);
  const shardKey = (i) => (sharded ? `shard = "s${i}"\n` : '');
  const backends = shards
    .map((g, i) =>
      `[[mysql_backends]]\nname = "s${i}-primary"\naddress = "127.0.0.1:${g.primary.port}"\nrole = "primary"\n${shardKey(i)}reserved_pool = 8\n` +
      `[[mysql_backends]]\nname = "s${i}-replica"\naddress = "127.0.0.1:${g.replicas[0].port}"\nrole = "replica"\n${shardKey(i)}`,
    )
    .join('');
  const sharding = sharded
    ? `[mysql.sharding]\nenabled = true\ndefault_shard = "s0"\n[[mysql.sharding.rules]]\ntable = "sbtest1"\ncolumn = "id"\nmap = { kind = "hash", shards = ["s0", "s1"] }\n`
    : '';
  writeFileSync(
    config,
    `[proxy.admin]\nlisten = "127.0.0.1:${admin}"\n[telemetry]\nlog_level = "warn"\n[[users]]\nname = "bench"\npassword = "bench-secret"\n` +
      `[health]\ninterval_seconds = 2\n[mysql]\nenabled = true\nworkers = 1\nread_write_listen = "127.0.0.1:${rw}"\nread_only_listen = "127.0.0.1:${ro}"\npool_max_per_backend = 40\nread_after_write_seconds = 0\n${sharding}` +
      `[postgres]\nenabled = false\n[redis]\nenabled = false\n${backends}`,
  );
  const child = spawn(process.execPath, [...EDGE_NODE_ARGS, join(__dirname, 'edge-launcher.cjs'), config], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (EDGE_NODE_ARGS.length > 0) console.log(`mysql-edge (${sharded ? 'sharded' : 'unsharded'}) pid ${child.pid} (${EDGE_NODE_ARGS.join(' ')})`);
  await waitReady(admin, 60000);
  return { child, port: rw, admin, pid: child.pid };
}

/** µs per routing decision of a cached statement shape: the SQL router plus the edge's shard target. */
function routingCost() {
  const { SqlRouter } = require('../../../libs/sql/src/index.ts');
  const { shardTarget } = require('../../../libs/mysql-edge/src/sharding/shard-target.ts');
  const rules = [{ table: 'sbtest1', column: 'id', map: { kind: 'hash', shards: ['s0', 's1'] } }];
  const router = new SqlRouter({ dialect: 'mysql', shardRules: rules, multiShard: 'reject', cacheSize: 1000 });
  const settings = { active: true, rules, allShards: ['s0', 's1'], multiShard: 'reject', tables: new Set(['sbtest1']), userShards: new Map() };
  const prepared = router.prepare('SELECT c FROM sbtest1 WHERE id=?');
  // best of 5 rounds of 200,000 after a warm-up: the machine is shared and noisy
  const measure = (label, once) => {
    for (let i = 0; i < 100000; i++) once(i);
    const n = 200000;
    let best = Infinity;
    let sink = 0;
    for (let round = 0; round < 5; round++) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < n; i++) sink += once(i) === 's0' ? 1 : 0;
      best = Math.min(best, Number(process.hrtime.bigint() - start) / 1000 / n);
    }
    console.log(`routing cost, ${label}: ${fmt(best, 2)} µs per statement (best of 5; ${sink > 0 ? 'keys on both shards' : '?'})`);
    return best;
  };
  const text = measure('text COM_QUERY point select (fingerprint + cache hit + key bind + shard)', (i) => shardTarget(router.route(`SELECT c FROM sbtest1 WHERE id=${i}`), 's0', settings).shard);
  const bound = measure('prepared execute (template bind + shard)', (i) => shardTarget(router.routePrepared(prepared, [i]), 's0', settings).shard);
  return { text, bound };
}

async function main() {
  if (ROUTING_ONLY) return void routingCost();
  ensureInstalled('sysbench');
  const dir = mkdtempSync(join(tmpdir(), 'dbproxy-bench-sharded-'));
  onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
  const settings = { 'innodb-buffer-pool-size': '128M' };
  const [single, s0, s1] = await Promise.all([startMariaDb({ replicas: 0, settings }), startMariaDb({ replicas: 1, settings, serverIdBase: 11 }), startMariaDb({ replicas: 1, settings, serverIdBase: 21 })]);
  let edge;
  let plain;
  try {
    console.log(`preparing sbtest1 with ${ROWS} rows: all on one MariaDB, split by id mod 2 over two shards...`);
    sql(single.primary, 'CREATE DATABASE sbtest');
    sysbench('oltp_point_select', { port: single.primary.port, user: 'root', password: '' }, 'prepare');
    await prepareShard(s0, 0);
    await prepareShard(s1, 1);
    edge = await startEdge(dir, [s0, s1]);
    const targets = [
      { name: 'MariaDB (one server, all rows)', port: single.primary.port, user: 'root', password: '' },
      { name: 'mysql-edge (two shards)', port: edge.port, user: 'bench', password: 'bench-secret', pid: edge.pid },
    ];
    if (UNSHARDED) {
      plain = await startEdge(dir, [s0], false);
      targets.push({ name: 'mysql-edge (unsharded, s0 only)', port: plain.port, user: 'bench', password: 'bench-secret', pid: plain.pid });
    }
    for (const t of targets) sysbench('oltp_point_select', t, 'run', ['--time=2']); // warm-up
    const rows = [];
    for (const [test, extra] of [['oltp_point_select', []], ['oltp_read_write', RW_OPTIONS]]) {
      const results = targets.map((t) => {
        const before = t.pid ? treeCpu(t.pid) : null;
        const r = sysbench(test, t, 'run', extra);
        if (before) {
          const now = treeCpu(t.pid);
          const statements = r.qps * DURATION;
          r.cpuUser = ((now.user - before.user) * 1e6) / statements;
          r.cpuSystem = ((now.system - before.system) * 1e6) / statements;
        }
        return r;
      });
      rows.push({ test, results });
      const cpuOf = (r) => (r.cpuUser === undefined ? '' : `, edge CPU ${fmt(r.cpuUser + r.cpuSystem, 1)} µs/statement (${fmt(r.cpuUser, 1)} user + ${fmt(r.cpuSystem, 1)} system)`);
      console.log(`${test} ${THREADS} threads: ${targets.map((t, i) => `${t.name} ${fmt(results[i].tps)} tps (${fmt(results[i].qps)} qps) p95 ${fmt(results[i].p95, 2)} ms errors ${results[i].errors}${cpuOf(results[i])}`).join(' | ')}`);
    }
    const metrics = await (await fetch(`http://127.0.0.1:${edge.admin}/metrics`)).text();
    const perShard = ['s0', 's1'].map((s) => {
      let total = 0;
      for (const line of metrics.split('\n')) if (line.startsWith('dbproxy_mysql_queries_total{') && line.includes(`shard="${s}"`)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
      return `${s} ${total}`;
    });
    console.log(`statements per shard through mysql-edge: ${perShard.join(', ')}`);
    const plainHead = UNSHARDED ? ' unsharded edge tps (p95 ms) | unsharded edge CPU µs/stmt |' : '';
    console.log(`\n| test (${THREADS} threads, ${DURATION} s) | MariaDB tps (p95 ms) | mysql-edge 2 shards tps (p95 ms) | edge/direct | errors (edge) | edge CPU µs/stmt |${plainHead}`);
    console.log(`|---|---|---|---|---|---|${UNSHARDED ? '---|---|' : ''}`);
    for (const r of rows) {
      const [d, e, u] = r.results;
      const plainCells = u ? ` ${fmt(u.tps)} (${fmt(u.p95, 2)}) | ${fmt(u.cpuUser + u.cpuSystem, 1)} |` : '';
      console.log(`| ${r.test} | ${fmt(d.tps)} (${fmt(d.p95, 2)}) | ${fmt(e.tps)} (${fmt(e.p95, 2)}) | ${fmt(e.tps / d.tps, 2)}x | ${e.errors} | ${fmt(e.cpuUser + e.cpuSystem, 1)} |${plainCells}`);
    }
    const cost = routingCost();
    console.log(`\nrouting cost per statement (target <= 5 µs): text ${fmt(cost.text, 2)} µs, prepared ${fmt(cost.bound, 2)} µs`);
  } finally {
    edge?.child.kill('SIGTERM');
    plain?.child.kill('SIGTERM');
    await sleep(EDGE_NODE_ARGS.length > 0 ? 3000 : 500); // --cpu-prof writes its profile on exit
    await Promise.all([single.destroy(), s0.destroy(), s1.destroy()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
