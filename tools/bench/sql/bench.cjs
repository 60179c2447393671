#!/usr/bin/env node
// Benchmark of libs/sql: microseconds per classification + shard-key extraction on a cache hit and
// on a miss, over the mixed statement corpus. Loads the TypeScript sources with TypeScript's
// transpileModule (ts-register.cjs; no build).
// Usage: node tools/bench/sql/bench.cjs [--quick]. Prints medians and p99s; never fails on time.
'use strict';
require('./ts-register.cjs');
const { CORPUS, corpusRouters } = require('../../../libs/sql/src/testing/corpus/index.ts');

const quick = process.argv.includes('--quick');
/** Statements reach the proxy as bytes decoded to (flat) strings; concatenated literals here would be ropes. */
const wire = (sql) => Buffer.from(sql, 'utf8').toString('utf8');
const HIT_BUDGET_US = 5;
const MISS_BUDGET_US = 2000;

const now = () => process.hrtime.bigint();
const us = (ns) => Number(ns) / 1000;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const sortNum = (a) => [...a].sort((x, y) => x - y);
const fmt = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)).padStart(7);

/** Per-call time of `fn(i)`, measured in batches of `batch` calls: returns the batch means (µs). */
function timeBatches(fn, batches, batch) {
  const means = [];
  let sink = 0;
  for (let b = 0; b < batches; b++) {
    const start = now();
    for (let i = 0; i < batch; i++) sink += fn(b * batch + i);
    means.push(us(now() - start) / batch);
  }
  if (sink === -1) console.log('unreachable');
  return means;
}

/** CPU time per call (user + system), which leaves out time the process was not scheduled. */
function cpuPerCall(fn, calls) {
  const start = process.cpuUsage();
  let sink = 0;
  for (let i = 0; i < calls; i++) sink += fn(i);
  const used = process.cpuUsage(start);
  if (sink === -1) console.log('unreachable');
  return (used.user + used.system) / calls;
}

function hitPath() {
  const routers = corpusRouters(8192);
  const ids = Array.from({ length: 64 }, (_, i) => 1 + ((i * 7919) % 100000));
  const orm = (a, b, c) =>
    'SELECT `User`.`id`, `User`.`name`, `User`.`email`, `User`.`role`, `User`.`status`, `User`.`locale`, `User`.`avatarUrl`, ' +
    `\`User\`.\`lastLoginAt\`, \`User\`.\`createdAt\`, \`User\`.\`updatedAt\` FROM \`users\` AS \`User\` WHERE \`User\`.\`id\` IN (${a}, ${b}, ${c})`;
  const named = [
    { name: 'sysbench point select, text (SELECT c FROM sbtest1 WHERE id=<n>)', texts: ids.map((id) => wire(`SELECT c FROM sbtest1 WHERE id=${id}`)) },
    { name: 'sysbench point select, ? + bound parameter', texts: [wire('SELECT c FROM sbtest1 WHERE id=?')], params: ids.map((id) => [id]) },
    { name: 'ORM 10-column SELECT with a 3-key IN', texts: ids.map((id) => wire(orm(id, id + 1, id + 2))) },
  ];
  const router = routers.mysql;
  const prepared = router.prepare('SELECT c FROM sbtest1 WHERE id=?');
  for (const n of named) router.route(n.texts[0], n.params?.[0]); // the one miss per shape happens here
  const parsesBefore = router.stats().parses;
  const results = [];
  for (const n of named) {
    const run = (i) => router.route(n.texts[i % n.texts.length], n.params?.[i % n.params.length]).decision.kind.length;
    for (let i = 0; i < (quick ? 20000 : 100000); i++) run(i); // JIT warm-up
    const means = sortNum(timeBatches(run, quick ? 200 : 600, 100));
    results.push({ name: n.name, median: percentile(means, 50), p99: percentile(means, 99), cpu: cpuPerCall(run, quick ? 50000 : 200000) });
  }
  const bind = (i) => router.routePrepared(prepared, [ids[i % ids.length]]).decision.kind.length;
  for (let i = 0; i < 50000; i++) bind(i);
  const bindMeans = sortNum(timeBatches(bind, quick ? 200 : 600, 100));
  results.push({ name: 'sysbench point select, prepared template bind (routePrepared)', median: percentile(bindMeans, 50), p99: percentile(bindMeans, 99), cpu: cpuPerCall(bind, 100000) });
  const parsesDuringHits = router.stats().parses - parsesBefore;
  return { results, parsesDuringHits };
}

function mixedHits() {
  const routers = corpusRouters(8192);
  const cases = CORPUS.map((c) => ({ router: routers[c.dialect], sql: wire(c.sql), params: c.params }));
  for (const c of cases) c.router.route(c.sql, c.params);
  const perStatement = [];
  const pooled = [];
  for (const c of cases) {
    const run = () => c.router.route(c.sql, c.params).decision.kind.length;
    for (let i = 0; i < 300; i++) run();
    const means = sortNum(timeBatches(run, quick ? 30 : 100, 20));
    perStatement.push({ sql: c.sql, median: percentile(means, 50) });
    pooled.push(...means);
  }
  return { perStatement, pooled: sortNum(pooled) };
}

/** Each distinct statement shape once per round, in random order, on fresh routers: CPU and wall µs. */
function missPath() {
  const rounds = quick ? 3 : 9;
  const warmups = quick ? 3 : 8;
  const { Fingerprinter } = require('../../../libs/sql/src/fingerprint.ts');
  const fingerprinters = { mysql: new Fingerprinter('mysql'), postgresql: new Fingerprinter('postgresql') };
  const shapes = new Map();
  for (const c of CORPUS) {
    const key = `${c.dialect} ${fingerprinters[c.dialect].run(c.sql).out.toString()}`;
    if (!shapes.has(key)) shapes.set(key, { c: { ...c, sql: wire(c.sql) }, cpu: [], wall: [] });
  }
  const list = [...shapes.values()];
  for (let round = 0; round < warmups + rounds; round++) {
    const routers = corpusRouters(8192);
    const order = list.map((_, i) => i).sort(() => Math.random() - 0.5);
    for (const i of order) {
      const { c, cpu, wall } = list[i];
      const cpuStart = process.cpuUsage();
      const start = now();
      routers[c.dialect].route(c.sql, c.params);
      const elapsed = us(now() - start);
      const used = process.cpuUsage(cpuStart);
      if (round >= warmups) {
        cpu.push(used.user + used.system);
        wall.push(elapsed);
      }
    }
  }
  return list.map((s) => ({ sql: s.c.sql, cpu: percentile(sortNum(s.cpu), 50), wall: percentile(sortNum(s.wall), 50) }));
}

function main() {
  console.log(`libs/sql benchmark — node ${process.version}, ${CORPUS.length} corpus statements${quick ? ' (quick)' : ''}`);
  console.log('times are µs per call (wall clock, batch means); cpu = process CPU time per call\n');

  const { results, parsesDuringHits } = hitPath();
  console.log('Cache hit (tokenizer pass + LRU lookup + key binding):');
  console.log('  median      p99      cpu   statement');
  for (const r of results) console.log(`  ${fmt(r.median)}  ${fmt(r.p99)}  ${fmt(r.cpu)}   ${r.name}`);
  console.log(`  node-sql-parser runs during the hit loops: ${parsesDuringHits}\n`);

  const mixed = mixedHits();
  const hitMedians = sortNum(mixed.perStatement.map((s) => s.median));
  console.log('Cache hit over the mixed corpus:');
  console.log(`  median ${fmt(percentile(mixed.pooled, 50))}   p99 ${fmt(percentile(mixed.pooled, 99))}   slowest statement median ${fmt(hitMedians[hitMedians.length - 1])}`);
  const slowHit = [...mixed.perStatement].sort((a, b) => b.median - a.median)[0];
  console.log(`  slowest: ${slowHit.sql.slice(0, 100)}${slowHit.sql.length > 100 ? '...' : ''}\n`);

  const miss = missPath();
  const missCpu = sortNum(miss.map((s) => s.cpu));
  const missWall = sortNum(miss.map((s) => s.wall));
  const worst = [...miss].sort((a, b) => b.cpu - a.cpu)[0];
  const over = miss.filter((s) => s.cpu > MISS_BUDGET_US);
  console.log(`Cache miss (full analysis, node-sql-parser on a bounded probe), ${miss.length} distinct shapes, per-shape medians:`);
  console.log(`  cpu   median ${fmt(percentile(missCpu, 50))}   p99 ${fmt(percentile(missCpu, 99))}   max ${fmt(missCpu[missCpu.length - 1])}`);
  console.log(`  wall  median ${fmt(percentile(missWall, 50))}   p99 ${fmt(percentile(missWall, 99))}   max ${fmt(missWall[missWall.length - 1])}`);
  console.log(`  slowest: ${worst.sql.slice(0, 100)}${worst.sql.length > 100 ? '...' : ''}`);
  console.log(`  shapes over ${MISS_BUDGET_US} µs of CPU: ${over.length}\n`);

  const point = results[0].median;
  const orm = results[2].median;
  console.log('Targets:');
  console.log(`  hit median, sysbench point select <= ${HIT_BUDGET_US} µs: ${point.toFixed(2)} µs ${point <= HIT_BUDGET_US ? 'OK' : 'OVER'}`);
  console.log(`  hit median, ORM 10-column 3-key IN  <= ${HIT_BUDGET_US} µs: ${orm.toFixed(2)} µs ${orm <= HIT_BUDGET_US ? 'OK' : 'OVER'}`);
  console.log(`  no miss over ${MISS_BUDGET_US} µs: max ${worst.cpu.toFixed(0)} µs CPU ${worst.cpu <= MISS_BUDGET_US ? 'OK' : 'OVER'}`);
  console.log(`  no node-sql-parser on a hit: ${parsesDuringHits === 0 ? 'OK' : 'FAILED'}`);
  console.log(`  (load average ${require('node:os').loadavg().map((l) => l.toFixed(1)).join(' ')} on ${require('node:os').cpus().length} CPUs)`);
}

main();
