// Micro-benchmark of the resp codec: ns per command/reply scanned, encoded and decoded.
// Run: node libs/resp/bench/scan.bench.mjs   (compiles the TypeScript sources with @swc/core)
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('./swc-register.cjs');
const resp = require('../src/index.ts');
const RedisParser = require('redis-parser');

const { CommandScanner, ReplyScanner, CommandNameIndex, RespWriter, encodeCommand, decodeReply } = resp;

function repeat(frame, count) {
  return Buffer.concat(Array.from({ length: count }, (_, i) => (typeof frame === 'function' ? frame(i) : frame)));
}

/**
 * Runs `fn` (which handles `perCall` items) for ~`ms` of CPU per round; returns the median ns
 * of CPU time per item over 5 rounds. CPU time, not wall time, because the machine is shared.
 */
function measure(fn, perCall, ms = 100) {
  for (let i = 0; i < 300; i++) fn();
  const rounds = [];
  for (let r = 0; r < 5; r++) {
    let calls = 0;
    const start = process.cpuUsage();
    let used = 0;
    while (used < ms * 1000) {
      for (let i = 0; i < 20; i++) fn();
      calls += 20;
      const now = process.cpuUsage(start);
      used = now.user + now.system;
    }
    rounds.push((used * 1000) / (calls * perCall));
  }
  rounds.sort((a, b) => a - b);
  return rounds[2];
}

const PIPELINE = 1000;
const key = (i) => `key:${String(i).padStart(8, '0')}`;
const gets = repeat((i) => encodeCommand(['GET', key(i)]), PIPELINE);
const sets = repeat((i) => encodeCommand(['SET', key(i), 'v'.repeat(100)]), PIPELINE);
const inlineGets = Buffer.from(Array.from({ length: PIPELINE }, (_, i) => `GET ${key(i)}\r\n`).join(''));
const names = new CommandNameIndex([['GET', 1], ['SET', 2], ['MGET', 3], ['DEL', 4], ['PING', 5]]);

const commandScanner = new CommandScanner();
const scanCommands = (buf) => () => {
  const batch = commandScanner.scan(buf);
  if (batch.count !== PIPELINE) throw new Error('bad scan');
};
const scanAndRoute = (buf) => () => {
  const batch = commandScanner.scan(buf);
  let sum = 0;
  for (let i = 0; i < batch.count; i++) {
    const j = batch.argFirst[i];
    sum += names.get(batch.buffer, batch.argOffset[j], batch.argLength[j]) ?? 0;
    // The key stays in place: a router hashes batch.argOffset[j + 1] .. + batch.argLength[j + 1].
    sum += batch.argLength[j + 1] + batch.frameEnd[i] - batch.frameStart[i];
  }
  if (sum === 0) throw new Error('bad route');
};

const ok = repeat(Buffer.from('+OK\r\n'), PIPELINE);
const bulk100 = repeat(Buffer.from(`$100\r\n${'v'.repeat(100)}\r\n`), PIPELINE);
const ints = repeat(Buffer.from(':12345\r\n'), PIPELINE);
const mget10 = repeat(Buffer.from(`*10\r\n${`$8\r\n${'x'.repeat(8)}\r\n`.repeat(10)}`), PIPELINE);
const replyScanner = new ReplyScanner();
const scanReplies = (buf) => () => {
  if (replyScanner.scan(buf).count !== PIPELINE) throw new Error('bad scan');
};
const parseWithRedisParser = (buf) => {
  let n = 0;
  const parser = new RedisParser({ returnReply: () => n++, returnError: () => n++, returnBuffers: true });
  return () => {
    n = 0;
    parser.execute(buf);
    if (n !== PIPELINE) throw new Error('bad parse');
  };
};

// How fast this machine runs a trivial byte loop, to compare runs on different (or busy) machines.
const calibration = Buffer.alloc(1 << 16, 7);
function byteLoop() {
  let sum = 0;
  for (let i = 0; i < calibration.length; i++) sum += calibration[i];
  if (sum === 0) throw new Error('bad sum');
}

const writer = new RespWriter(64 * 1024);
const value = Buffer.from('v'.repeat(100));
const cases = [
  ['calibration: trivial loop over a Buffer, per byte', () => measure(byteLoop, calibration.length)],
  ['scan GET (multibulk), per command', () => measure(scanCommands(gets), PIPELINE)],
  ['scan SET 100 B value, per command', () => measure(scanCommands(sets), PIPELINE)],
  ['scan GET + name lookup + key/frame read, per command', () => measure(scanAndRoute(gets), PIPELINE)],
  ['scan GET (inline), per command', () => measure(scanCommands(inlineGets), PIPELINE)],
  ['scan +OK, per reply', () => measure(scanReplies(ok), PIPELINE)],
  ['scan :12345, per reply', () => measure(scanReplies(ints), PIPELINE)],
  ['scan $100 bulk, per reply', () => measure(scanReplies(bulk100), PIPELINE)],
  ['scan 10-item MGET array, per reply', () => measure(scanReplies(mget10), PIPELINE)],
  ['redis-parser (ioredis) +OK to values, per reply', () => measure(parseWithRedisParser(ok), PIPELINE)],
  ['redis-parser (ioredis) $100 bulk to Buffers, per reply', () => measure(parseWithRedisParser(bulk100), PIPELINE)],
  ['redis-parser (ioredis) 10-item MGET to Buffers, per reply', () => measure(parseWithRedisParser(mget10), PIPELINE)],
  ['decodeReply 10-item MGET array, per reply', () => measure(() => decodeReply(mget10, 0, mget10.length / PIPELINE), 1)],
  ['encodeCommand GET key, per command', () => measure(() => encodeCommand(['GET', 'key:00000001']), 1)],
  ['RespWriter 16 x SET 100 B + one flush, per command', () => measure(() => {
    for (let i = 0; i < 16; i++) writer.command(['SET', 'key:00000001', value]);
    writer.flush();
  }, 16)],
];

// Three passes over every case, interleaved; the best median of each case is reported, since
// other processes on the machine only ever make a pass slower.
const PASSES = 3;
const best = cases.map(() => Infinity);
for (let pass = 0; pass < PASSES; pass++) cases.forEach(([, run], i) => (best[i] = Math.min(best[i], run())));

console.log(`node ${process.version}, ${PIPELINE} frames per buffer, CPU time per item, best of ${PASSES} passes of a 5-round median`);
cases.forEach(([name], i) => console.log(`${name.padEnd(58)} ${best[i].toFixed(1).padStart(8)} ns`));
