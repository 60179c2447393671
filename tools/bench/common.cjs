// What the benchmark scripts (tools/bench/{mysql,pg,redis}/bench.cjs) share: command-line options,
// installing a missing tool with apt-get, waiting for a port or a dbproxy's /readyz, a process's
// CPU time and resident memory from /proc (with or without its descendants), and number formatting.
'use strict';
const { spawnSync, execFileSync } = require('node:child_process');
const { readFileSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const net = require('node:net');

/** The repository root. */
const ROOT = join(__dirname, '..', '..');

/** This run's command-line arguments. */
const args = process.argv.slice(2);

/** The value after `--name` on the command line, or `fallback`. */
const opt = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : fallback;
};

/** The leading `//` comment block of `script` (after the shebang): its usage text. */
function usageOf(script) {
  const lines = readFileSync(script, 'utf8').split('\n');
  const start = lines[0].startsWith('#!') ? 1 : 0;
  const end = lines.findIndex((line, i) => i >= start && !line.startsWith('//'));
  return lines.slice(start, end < 0 ? undefined : end).map((line) => line.replace(/^\/\/ ?/, '')).join('\n');
}

/**
 * Checks the command line before a benchmark installs or starts anything: `--help` prints the
 * script's usage and exits 0; an option the script does not take, or a value option without its
 * value, prints the usage and exits 2.
 */
function checkOptions(script, { values = [], flags = [] }) {
  const refuse = (why) => {
    process.stderr.write(`${why}\n\n${usageOf(script)}\n`);
    process.exit(2);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${usageOf(script)}\n`);
      process.exit(0);
    }
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name !== undefined && flags.includes(name)) continue;
    if (name === undefined || !values.includes(name)) refuse(`unknown option: ${arg}`);
    const value = args[i + 1];
    if (value === undefined || [...values, ...flags].includes(value.replace(/^--/, ''))) refuse(`${arg} needs a value`);
    i++;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The path of `binary`, installing Debian package `pkg` with apt-get first when it is missing. */
function ensureInstalled(binary, pkg = binary) {
  const found = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  if (found.status === 0) return found.stdout.trim();
  console.log(`installing ${pkg} (apt-get)...`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' }).stdout.trim();
}

/** Resolves once 127.0.0.1:`port` accepts a TCP connection; rejects after `timeoutMs`. */
function waitPort(port, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve();
      });
      s.on('error', () => (Date.now() > deadline ? reject(new Error(`port ${port} not open`)) : setTimeout(attempt, 100)));
    };
    attempt();
  });
}

/** Resolves once the dbproxy with admin port `adminPort` answers GET /readyz with 200; rejects after `timeoutMs`. */
async function waitReady(adminPort, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${adminPort}/readyz`).then((r) => r.status === 200).catch(() => false); // not listening yet
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`dbproxy on admin port ${adminPort} not ready`);
    await sleep(200);
  }
}

/** User and system CPU seconds a process has used so far (/proc/PID/stat, clock ticks of 10 ms); `children`: of its waited-for children. */
function cpuSeconds(pid, children = false) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const at = children ? 13 : 11;
  return { user: Number(fields[at]) / 100, system: Number(fields[at + 1]) / 100, minorFaults: Number(fields[children ? 8 : 7]) };
}

/** Resident memory of a process in bytes (VmRSS). */
function rssBytes(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
}

/** A process and its descendants (worker processes), from the PPid of every process in /proc. */
function treePids(rootPid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // the process went away
    }
  }
  const out = [];
  const stack = [rootPid];
  while (stack.length) {
    const pid = stack.pop();
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** User and system CPU seconds of a process and its descendants. */
function treeCpu(rootPid) {
  const total = { user: 0, system: 0 };
  for (const pid of treePids(rootPid)) {
    try {
      const cpu = cpuSeconds(pid);
      total.user += cpu.user;
      total.system += cpu.system;
    } catch {
      // gone
    }
  }
  return total;
}

/** Resident memory in bytes of a process and its descendants. */
function treeRss(rootPid) {
  let total = 0;
  for (const pid of treePids(rootPid)) {
    try {
      total += rssBytes(pid);
    } catch {
      // gone
    }
  }
  return total;
}

/** `n` with `digits` decimals, or 'n/a' when it is not a finite number. */
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
/** `v` right-aligned in `n` characters. */
const pad = (v, n) => String(v).padStart(n);
/** `a / b` as '1.23x', or '-' without `b`. */
const ratio = (a, b) => (b ? (a / b).toFixed(2) + 'x' : '-');
/** This machine's 1, 5 and 15 minute load averages, for a run's header: a shared machine's load comes and goes. */
const loadAverage = () => require('node:os').loadavg().map((l) => l.toFixed(1)).join(' ');

/** The machine's CPU time so far from /proc/stat, in clock ticks: idle (idle + iowait) and all. */
function machineTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { idle: (fields[3] ?? 0) + (fields[4] ?? 0), total: fields.reduce((a, b) => a + b, 0) };
}

/** Share of the machine's CPU left idle between two machineTicks() readings (0..1). */
const idleShare = (before, after) => (after.total > before.total ? (after.idle - before.idle) / (after.total - before.total) : NaN);

/** Synchronous cleanups (temporary files) to run when the benchmark is interrupted. */
const interruptCleanups = [];
function onInterrupt(cleanup) {
  interruptCleanups.push(cleanup);
}

/** A libs/testing directory watcher (`sh -c 'read _unused; …; rm -rf DIR'`): it must outlive us to do its job. */
function isDirectoryWatcher(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('read _unused');
  } catch {
    return true; // gone already
  }
}

// Interrupted (Ctrl-C, kill), a benchmark stops every process it started (proxies, PgBouncer,
// haproxy, load generators) instead of leaving them running to disturb the next measurement;
// libs/testing's servers and directories are stopped and removed by its own watchers at exit.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    const pids = treePids(process.pid).filter((pid) => pid !== process.pid && !isDirectoryWatcher(pid));
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    for (const cleanup of interruptCleanups) {
      try {
        cleanup();
      } catch {
        // best effort
      }
    }
    process.stderr.write(`\ninterrupted (${signal}): stopped ${pids.length} processes\n`);
    process.exit(130);
  });
}

module.exports = { ROOT, onInterrupt, args, opt, checkOptions, sleep, ensureInstalled, waitPort, waitReady, cpuSeconds, rssBytes, treePids, treeCpu, treeRss, fmt, pad, ratio, loadAverage, machineTicks, idleShare };
