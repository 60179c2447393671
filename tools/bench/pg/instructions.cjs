#!/usr/bin/env node
// Instructions per transaction, counted by valgrind (callgrind), of pg-edge with its shipped defaults and
// of PgBouncer, under pgbench -S: a figure that stays the same whatever else the machine is doing, where
// CPU time per transaction swings with the load. Counts user-space instructions only: the kernel's side
// of each read and write (about half of either proxy's CPU on loopback) is not in them.
// Never run by `npm test`.
//
// Usage: node tools/bench/pg/instructions.cjs [--modes transaction,transparent] [--protocols simple,extended]
//                                             [--clients 10] [--warmup 20000] [--transactions 16000] [--no-pgbouncer]
//   --warmup N        unmeasured transactions first (V8 optimises hot functions only after many calls)
//   --keep DIR        leave the callgrind files in DIR (callgrind_annotate names V8's builtins and the native
//                     code; JIT-compiled JavaScript shows as addresses)
//   --functions N     also the N functions of the main thread with the most instructions per transaction
//                     (self cost; JIT-compiled JavaScript named through node's perf map, --perf-basic-prof-only-functions)
//   --transactions N  the measured difference: runs of N/2 and of N·3/2 transactions are counted and
//                     subtracted, so the clients' connection set-up (in both) drops out of the main thread's
//                     count; the other threads' is over both runs (their garbage-collection bursts fall in either).
//                     Under valgrind the edge's timers (idle sweeps, health checks) and the collector's
//                     time-driven work land per transaction, in one run or the other: over 4,000 one build
//                     counted 10,500 to 26,700 on the main thread; over 16,000 (the default) 21,800 and 22,700.
//                     The functions' own counts (--functions) move far less than the total.
//   EDGE_NODE_FLAGS='--no-turbo-inlining' (environment)  node flags for pg-edge; this one charges each function
//                     its own instructions in --functions (inlined callees otherwise count to their caller)
// Per target it prints the main thread's instructions per transaction, the other threads' (V8's
// compiler and garbage-collector helpers, libuv's pool), and PgBouncer's beside pg-edge's.
// Starts its own PostgreSQL (libs/testing), installs pgbouncer and valgrind with apt-get when missing,
// runs pg-edge from dist/ (build first with `npm run build`). Under valgrind a process runs about 30
// times slower: the edge's health checks get a long timeout (they do not touch the measured path).
'use strict';
require('../sql/ts-register.cjs');
const { spawn, execFileSync } = require('node:child_process');
const { mkdtempSync, mkdirSync, writeFileSync, rmSync, readdirSync, readFileSync, chmodSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { args, opt, sleep, ensureInstalled, waitPort, checkOptions, onInterrupt, fmt, ratio, loadAverage } = require('../common.cjs');
const { postgresIds, writePgbouncerConfig } = require('./pgbouncer.cjs');
const { topFunctions } = require('./callgrind-functions.cjs');

checkOptions(__filename, { values: ['keep', 'modes', 'protocols', 'clients', 'warmup', 'transactions', 'functions'], flags: ['no-pgbouncer'] });
const { startPostgres, freePort } = require('../../../libs/testing/src/index.ts');

const MODES = opt('modes', 'transaction,transparent').split(',');
const PROTOCOLS = opt('protocols', 'simple,extended').split(',');
const CLIENTS = Number(opt('clients', '10'));
const WARMUP = Number(opt('warmup', '20000'));
const TRANSACTIONS = Number(opt('transactions', '16000'));
const FUNCTIONS = Number(opt('functions', '0'));
const PASSWORD = 'bench-secret';

/** pgbench -S through `port`: `total` transactions over CLIENTS clients. */
function pgbench(port, protocol, total) {
  const perClient = String(Math.max(1, Math.round(total / CLIENTS)));
  const out = execFileSync('pgbench', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-n', '-S', '-M', protocol, '-c', String(CLIENTS), '-j', '1', '-t', perClient, 'bench'], {
    env: { ...process.env, PGPASSWORD: PASSWORD },
    encoding: 'utf8',
  });
  const processed = Number(/actually processed: (\d+)/.exec(out)?.[1] ?? NaN);
  const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
  if (!(processed > 0) || failed > 0) throw new Error(`pgbench through port ${port} processed ${processed}, failed ${failed}:\n${out}`);
  return processed;
}

/** The `summary:` instruction count of each thread's file of callgrind dump `part` of process `pid`: { main, others }. */
function dumpTotals(dir, pid, part) {
  const files = readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.${part}-`));
  let main = NaN;
  let others = 0;
  for (const f of files) {
    const summary = Number(/^summary: (\d+)$/m.exec(readFileSync(join(dir, f), 'utf8'))?.[1] ?? 0);
    if (f.endsWith('-01')) main = summary;
    else others += summary;
  }
  return { main, others };
}

/** The main thread's file of callgrind dump `part` of process `pid`. */
function mainFile(dir, pid, part) {
  return join(dir, `cg.${pid}.${part}-01`);
}

/** callgrind_control as the counted process's user (vgdb reaches a valgrind of another user only through its files). */
function callgrindControl(flag, target) {
  execFileSync('callgrind_control', [flag, String(target.pid)], { stdio: 'ignore', timeout: 120000, ...(target.ids ?? {}) });
}

/** Counts a warm process: zero, N/2 transactions, dump; zero, 3N/2, dump; the difference per transaction. */
function countPerTransaction(dir, target, protocol) {
  pgbench(target.port, protocol, WARMUP);
  const counted = [];
  for (const total of [TRANSACTIONS / 2, (3 * TRANSACTIONS) / 2]) {
    callgrindControl('-z', target);
    const processed = pgbench(target.port, protocol, total);
    callgrindControl('-d', target);
    counted.push({ processed, ...dumpTotals(dir, target.pid, ++target.parts) });
  }
  const [a, b] = counted;
  const functions = FUNCTIONS > 0 ? topFunctions(mainFile(dir, target.pid, target.parts - 1), mainFile(dir, target.pid, target.parts), `/tmp/perf-${target.pid}.map`, b.processed - a.processed, FUNCTIONS) : [];
  // the helper threads' work comes in bursts (a major collection lands in one run or the other): their
  // count is over both runs together, where the main thread's is the difference
  return { main: (b.main - a.main) / (b.processed - a.processed), others: (a.others + b.others) / (a.processed + b.processed), functions };
}

function valgrind(dir, argv, options = {}) {
  return spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', '--separate-threads=yes', '--dump-instr=no', `--callgrind-out-file=${join(dir, 'cg.%p')}`, ...argv], { stdio: ['ignore', 'ignore', 'ignore'], ...options });
}

async function startEdge(dir, pgPort, mode) {
  const [rw, admin] = [await freePort(), await freePort()];
  const config = join(dir, `${mode}.toml`);
  writeFileSync(
    config,
    `[telemetry]\nlog_level = "error"\n[proxy.admin]\nlisten = "127.0.0.1:${admin}"\n[bus]\nconnect_timeout_seconds = 1\n` +
      `[[users]]\nname = "postgres"\npassword = "${PASSWORD}"\n` +
      `[health]\ninterval_seconds = 5\ntimeout_seconds = 60\nfailures_before_down = 100\n[mysql]\nenabled = false\n[redis]\nenabled = false\n` +
      `[postgres]\nenabled = true\nrouting_mode = "${mode}"\nread_write_listen = "127.0.0.1:${rw}"\nread_only_listen = "127.0.0.1:${await freePort()}"\n` +
      `[[postgres_backends]]\nname = "primary"\naddress = "127.0.0.1:${pgPort}"\nrole = "primary"\nusername = "postgres"\ndatabase = "bench"\n`,
  );
  // EDGE_NODE_FLAGS as in bench.cjs (`--no-turbo-inlining` charges each function its own instructions, at some cost to the total)
  const flags = (process.env.EDGE_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = valgrind(dir, [process.execPath, ...flags, ...(FUNCTIONS > 0 ? ['--perf-basic-prof-only-functions'] : []), join(__dirname, 'edge-launcher.cjs'), config]);
  await waitPort(rw, 240000);
  await sleep(15000); // the first health check and the pool's first connections, 30 times slower
  return { name: `pg-edge ${mode}`, child, pid: child.pid, port: rw, parts: 0 };
}

async function startPgbouncer(dir, pgPort) {
  const bin = ensureInstalled('pgbouncer');
  const port = await freePort();
  const ini = writePgbouncerConfig(dir, { pgPort, port, password: PASSWORD });
  const ids = postgresIds();
  const child = valgrind(dir, [bin, ini], ids);
  await waitPort(port, 120000);
  return { name: 'PgBouncer (transaction)', child, pid: child.pid, port, parts: 0, ids };
}

async function stop(target) {
  target.child.kill('SIGTERM');
  await new Promise((r) => (target.child.exitCode !== null ? r() : target.child.once('exit', r)));
}

async function main() {
  ensureInstalled('valgrind');
  const keep = opt('keep', undefined);
  if (keep) mkdirSync(keep, { recursive: true });
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'dbproxy-bench-pg-instructions-'));
  chmodSync(dir, 0o777); // PgBouncer's callgrind writes here as postgres
  if (!keep) onInterrupt(() => rmSync(dir, { recursive: true, force: true }));
  console.log(`load average ${loadAverage()} (instruction counts do not depend on it); starting PostgreSQL (libs/testing)...`);
  const pg = await startPostgres({ replicas: 0, settings: { max_connections: '200' } });
  const rows = [];
  try {
    const admin = new (require('pg').Client)({ host: pg.primary.host, port: pg.primary.port, user: 'postgres', database: 'postgres' });
    await admin.connect();
    await admin.query('CREATE DATABASE bench');
    await admin.end();
    execFileSync('pgbench', ['-i', '-q', '-s', '1', '-h', '127.0.0.1', '-p', String(pg.primary.port), '-U', 'postgres', 'bench'], { stdio: 'ignore' });
    const starters = [...(args.includes('--no-pgbouncer') ? [] : [() => startPgbouncer(dir, pg.primary.port)]), ...MODES.map((mode) => () => startEdge(dir, pg.primary.port, mode))];
    for (const start of starters) {
      const target = await start();
      try {
        for (const protocol of PROTOCOLS) {
          const counts = countPerTransaction(dir, target, protocol);
          rows.push({ target: target.name, protocol, ...counts });
          console.log(`  ${target.name} ${protocol}: ${fmt(counts.main)} instructions per transaction on the main thread, ${fmt(counts.others)} on other threads`);
          for (const [name, perTx] of counts.functions) console.log(`    ${fmt(perTx).padStart(8)}  ${name}`);
        }
      } finally {
        await stop(target);
      }
    }
  } finally {
    await pg.destroy();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\npgbench -S -c ${CLIENTS}, ${WARMUP} transactions of warm-up, per transaction over ${TRANSACTIONS} more (callgrind, user space only)\n`);
  console.log('| target | protocol | main thread instructions/tx | other threads | total | total vs PgBouncer |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const peer = rows.find((p) => p.target.startsWith('PgBouncer') && p.protocol === r.protocol);
    const total = r.main + r.others;
    console.log(`| ${r.target} | ${r.protocol} | ${fmt(r.main)} | ${fmt(r.others)} | ${fmt(total)} | ${peer && peer !== r ? ratio(total, peer.main + peer.others) : '-'} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
