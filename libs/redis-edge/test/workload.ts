// A deterministic mix of commands over a few key types, for comparing replies through the
// proxy with replies from a direct connection.
import type { Redis } from 'ioredis';

type Arg = string | number;

/** Small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function mixedCommands(count: number, seed: number, prefix: string, options: { multiKey: boolean }): Arg[][] {
  const rand = prng(seed);
  const pick = (n: number): number => Math.floor(rand() * n);
  const key = (kind: string): string => `${prefix}:${kind}:${pick(40)}`;
  const value = (): string => `v${pick(1000)}`;
  const makers: (() => Arg[])[] = [
    () => ['SET', key('s'), value()],
    () => ['GET', key('s')],
    () => ['INCR', key('n')],
    () => ['INCRBY', key('n'), pick(100) - 50],
    () => ['APPEND', key('s'), value()],
    () => ['STRLEN', key('s')],
    () => ['SETNX', key('s'), value()],
    () => ['GETDEL', key('s')],
    () => ['DEL', key('s')],
    () => ['EXISTS', key('s')],
    () => ['LPUSH', key('l'), value()],
    () => ['RPUSH', key('l'), value(), value()],
    () => ['LRANGE', key('l'), 0, -1],
    () => ['LLEN', key('l')],
    () => ['LPOP', key('l')],
    () => ['HSET', key('h'), `f${pick(5)}`, value()],
    () => ['HGET', key('h'), `f${pick(5)}`],
    () => ['HGETALL', key('h')],
    () => ['HINCRBY', key('h'), 'count', pick(10)],
    () => ['SADD', key('t'), `m${pick(20)}`],
    () => ['SISMEMBER', key('t'), `m${pick(20)}`],
    () => ['SCARD', key('t')],
    () => ['ZADD', key('z'), pick(100), `m${pick(20)}`],
    () => ['ZRANGE', key('z'), 0, -1, 'WITHSCORES'],
    () => ['ZINCRBY', key('z'), 2, `m${pick(20)}`],
    () => ['ZSCORE', key('z'), `m${pick(20)}`],
    () => ['TYPE', key(['s', 'l', 'h', 't', 'z'][pick(5)])],
    () => ['INCR', key('s')], // often a WRONGTYPE / not-an-integer error, on both sides
    () => ['GET', key('l')], // WRONGTYPE when the list exists
    () => ['PING'],
    () => ['ECHO', value()],
  ];
  if (options.multiKey) {
    makers.push(
      () => ['MGET', key('s'), key('s'), key('n'), key('s')],
      () => ['MSET', key('s'), value(), key('s'), value(), key('s'), value()],
      () => ['DEL', key('s'), key('n'), key('s')],
      () => ['EXISTS', key('s'), key('l'), key('h'), key('s')],
      () => ['UNLINK', key('n'), key('s')],
      () => ['TOUCH', key('s'), key('h')],
      () => ['DBSIZE'],
    );
  }
  return Array.from({ length: count }, () => makers[pick(makers.length)]());
}

/** Runs `commands` as one pipeline; each reply as [error message | null, result]. */
export async function runPipeline(client: Redis, commands: readonly Arg[][]): Promise<[string | null, unknown][]> {
  const pipeline = client.pipeline();
  for (const [name, ...args] of commands) pipeline.call(String(name), ...args);
  const results = (await pipeline.exec()) ?? [];
  return results.map(([err, value]) => [err ? err.message : null, value]);
}
