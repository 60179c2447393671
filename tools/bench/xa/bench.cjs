#!/usr/bin/env node
// XA benchmark: inserts per second over two MariaDB primaries through the xa-coordinator (one
// XA transaction per insert, both participants) at 1, 8 and 32 concurrent requesters, with the
// journal's group commit on and off, beside the same inserts without XA (the insert on both
// primaries in parallel, autocommit: what best-effort fanout does). Prints the journal's fsyncs
// per commit decision (from the coordinator's /metrics). Never run by `npm test`.
//
// Usage: node tools/bench/xa/bench.cjs [--duration 5] [--quick] [--concurrency 1,8,32]
//   --quick  2 s per run
// Starts its own two MariaDB primaries and nats-server (libs/testing); runs the coordinator from
// dist/ (build first with `npm run build`); the journal is on the file system of os.tmpdir().
'use strict';
require('../sql/ts-register.cjs');
const { spawn } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { createConnection } = require('mysql2/promise');
const { startMariaDb, startNats, freePort } = require('../../../libs/testing/src/index.ts');
const { createBus } = require('../../../libs/bus/src/index.ts');
const { XaClient } = require('../../../libs/xa-coordinator/src/index.ts');
const { ROOT, args, opt, sleep, waitReady, checkOptions, onInterrupt, pad } = require('../common.cjs');

checkOptions(__filename, { values: ['duration', 'concurrency'], flags: ['quick'] });
const DURATION_MS = (args.includes('--quick') ? 2 : Number(opt('duration', '5'))) * 1000;
const LEVELS = String(opt('concurrency', '1,8,32')).split(',').map(Number);
const PARTICIPANTS = [
  { shard: 's1', backend: 'p1' },
  { shard: 's2', backend: 'p2' },
];

let nextId = 1;

/** Runs `one()` in `n` loops for the duration; returns operations per second and errors. */
async function drive(n, one) {
  const end = Date.now() + DURATION_MS;
  let done = 0;
  let errors = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: n }, async (_, lane) => {
      while (Date.now() < end) {
        try {
          await one(lane);
          done++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { perSecond: done / ((Date.now() - started) / 1000), errors };
}

async function metric(adminPort, name) {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

function coordinatorConfig(dir, nats, p1, p2, adminPort, groupCommit) {
  const path = join(dir, `xa-${groupCommit}.toml`);
  writeFileSync(
    path,
    `[bus]\nnats_url = "${nats.url}"\n[telemetry]\nlog_level = "warn"\n[proxy.admin]\nxa_coordinator = "127.0.0.1:${adminPort}"\n` +
      `[mysql.xa]\nenabled = true\njournal_path = "${join(dir, `journal-${groupCommit}`)}"\ngroup_commit = ${groupCommit}\nmax_in_flight = 1024\n` +
      `[[mysql_backends]]\nname = "p1"\naddress = "127.0.0.1:${p1.port}"\nrole = "primary"\nshard = "s1"\n` +
      `[[mysql_backends]]\nname = "p2"\naddress = "127.0.0.1:${p2.port}"\nrole = "primary"\nshard = "s2"\n`,
  );
  return path;
}

async function withCoordinator(configPath, adminPort, work) {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'dbproxy'), 'start', 'xa-coordinator', '--config', configPath], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  onInterrupt(() => child.kill('SIGKILL'));
  try {
    await waitReady(adminPort);
    return await work();
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'dbproxy-bench-xa-'));
  const nats = await startNats({ jetstream: true });
  const g1 = await startMariaDb({ replicas: 0, serverIdBase: 1 });
  const g2 = await startMariaDb({ replicas: 0, serverIdBase: 11 });
  onInterrupt(() => Promise.all([g1.destroy(), g2.destroy(), nats.destroy()]));
  const primaries = [g1.primary, g2.primary];
  const rows = {};
  try {
    for (const s of primaries) {
      const c = await createConnection({ host: '127.0.0.1', port: s.port, user: 'root' });
      await c.query('CREATE DATABASE bench');
      await c.query('CREATE TABLE bench.items (id BIGINT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB');
      await c.end();
    }
    // without XA: the insert on both primaries in parallel, one connection per requester and primary
    const max = Math.max(...LEVELS);
    const direct = await Promise.all(Array.from({ length: max }, () => Promise.all(primaries.map((s) => createConnection({ host: '127.0.0.1', port: s.port, user: 'root' })))));
    for (const n of LEVELS) {
      rows[`plain/${n}`] = await drive(n, async (lane) => {
        const id = nextId++;
        await Promise.all(direct[lane].map((c) => c.query(`INSERT INTO bench.items VALUES (${id}, 'plain')`)));
      });
    }
    for (const pair of direct) for (const c of pair) await c.end();

    const bus = createBus({ name: 'xa-bench', natsUrl: nats.url });
    await bus.waitForConnection(5000);
    const client = new XaClient(bus, { requestedBy: 'xa-bench' });
    for (const groupCommit of [true, false]) {
      const adminPort = await freePort();
      await withCoordinator(coordinatorConfig(dir, nats, g1.primary, g2.primary, adminPort, groupCommit), adminPort, async () => {
        for (const n of LEVELS) {
          const fsyncs0 = await metric(adminPort, 'dbproxy_xa_journal_fsyncs_total');
          const decisions0 = await metric(adminPort, 'dbproxy_xa_journal_decisions_total');
          const r = await drive(n, async () => {
            const id = nextId++;
            await client.execute({ statement: `INSERT INTO bench.items VALUES (${id}, 'xa')`, participants: PARTICIPANTS, deadlineMs: 5000 });
          });
          const fsyncs = (await metric(adminPort, 'dbproxy_xa_journal_fsyncs_total')) - fsyncs0;
          const decisions = (await metric(adminPort, 'dbproxy_xa_journal_decisions_total')) - decisions0;
          rows[`xa-${groupCommit ? 'group' : 'single'}/${n}`] = { ...r, fsyncsPerDecision: decisions > 0 ? fsyncs / decisions : NaN };
        }
      });
    }
    await bus.close();

    process.stdout.write(`\nXA inserts over two MariaDB primaries (${DURATION_MS / 1000} s per run; inserts/s = transactions/s, each writes one row on both)\n`);
    process.stdout.write(`${pad('requesters', 12)}${pad('no XA', 10)}${pad('XA group', 10)}${pad('fsync/dec', 11)}${pad('XA single', 11)}${pad('fsync/dec', 11)}${pad('group/noXA', 12)}  errors\n`);
    for (const n of LEVELS) {
      const plain = rows[`plain/${n}`];
      const group = rows[`xa-group/${n}`];
      const single = rows[`xa-single/${n}`];
      process.stdout.write(
        `${pad(String(n), 12)}${pad(plain.perSecond.toFixed(0), 10)}${pad(group.perSecond.toFixed(0), 10)}${pad(group.fsyncsPerDecision.toFixed(2), 11)}` +
          `${pad(single.perSecond.toFixed(0), 11)}${pad(single.fsyncsPerDecision.toFixed(2), 11)}${pad((group.perSecond / plain.perSecond).toFixed(2), 12)}  ${plain.errors + group.errors + single.errors}\n`,
      );
    }
  } finally {
    await Promise.all([g1.destroy(), g2.destroy(), nats.destroy()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
