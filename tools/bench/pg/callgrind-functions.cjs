// Instructions per function from a callgrind dump, with V8's JIT-compiled JavaScript named from
// the process's perf map (node --perf-basic-prof-only-functions writes /tmp/perf-<pid>.map).
// Self cost only: what the function's own code executed, not its callees'. Used by instructions.cjs
// --functions; never run by `npm test`.
'use strict';
const { readFileSync, existsSync } = require('node:fs');

/** Self instructions by function id, and the ids' names, of one callgrind output file. */
function selfCosts(file) {
  const names = new Map();
  const costs = new Map();
  let current;
  let callCost = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const fn = /^(c?fn)=\((\d+)\)(?: (.*))?$/.exec(line);
    if (fn) {
      if (fn[3] !== undefined) names.set(fn[2], fn[3]);
      if (fn[1] === 'fn') current = fn[2];
      continue;
    }
    if (line.startsWith('calls=')) {
      callCost = true; // the next cost line is the call's inclusive cost, not the caller's own
      continue;
    }
    const c = line.charCodeAt(0);
    const isCost = (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2a;
    if (!isCost) continue;
    if (callCost) {
      callCost = false;
      continue;
    }
    const value = Number(line.split(' ')[1]);
    if (current !== undefined && Number.isFinite(value)) costs.set(current, (costs.get(current) ?? 0) + value);
  }
  return { names, costs };
}

/** A resolver of `0x…` names (JIT code) through a perf map; other names pass through. */
function jitNames(mapFile) {
  // code moves and its space is reused: of the entries at one address the last written is the one alive
  const byStart = new Map();
  if (existsSync(mapFile)) {
    for (const line of readFileSync(mapFile, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
      if (m) byStart.set(parseInt(m[1], 16), [parseInt(m[1], 16), parseInt(m[2], 16), m[3]]);
    }
  }
  const entries = [...byStart.values()].sort((a, b) => a[0] - b[0]);
  return (name) => {
    const m = /^0x([0-9a-f]+)$/.exec(name);
    if (!m) return name;
    const address = parseInt(m[1], 16);
    let lo = 0;
    let hi = entries.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [start, size, label] = entries[mid];
      if (address < start) hi = mid - 1;
      else if (address >= start + size) lo = mid + 1;
      else return label;
    }
    return '(code without a symbol: a stripped binary, or JIT code not in the perf map)';
  };
}

/** Self instructions by resolved name of one dump file. */
function byName(file, resolve) {
  const { names, costs } = selfCosts(file);
  const out = new Map();
  for (const [id, cost] of costs) {
    const name = resolve(names.get(id) ?? '?').replace(/\/[^ ]*\/dist\/libs\//, '');
    out.set(name, (out.get(name) ?? 0) + cost);
  }
  return out;
}

/** The `top` functions of (after − before) per transaction: [name, instructions per transaction]. */
function topFunctions(beforeFile, afterFile, mapFile, transactions, top) {
  const resolve = jitNames(mapFile);
  const before = byName(beforeFile, resolve);
  const after = byName(afterFile, resolve);
  const rows = [];
  for (const [name, cost] of after) rows.push([name, (cost - (before.get(name) ?? 0)) / transactions]);
  return rows.sort((a, b) => b[1] - a[1]).slice(0, top);
}

module.exports = { selfCosts, jitNames, topFunctions };
