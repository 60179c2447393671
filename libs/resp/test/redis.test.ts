// resp against the real Redis on 127.0.0.1:6379: pipelined RESP2, a RESP3 session, inline commands, error texts.
import {
  CommandScanner, decodeReply, encodeCommand, parsePubSub, ReplyFlag, RespType, RespWriter, type RespLimits, type RespValue,
} from '../src';
import { RespClient } from './resp-client';

const PREFIX = `dbproxy:resp-test:${process.pid}:${Date.now()}:`;
const key = (name: string): string => PREFIX + name;
const bulk = (s: string | Buffer): RespValue => ({ type: 'bulk', value: Buffer.isBuffer(s) ? s : Buffer.from(s) });
const int = (value: number): RespValue => ({ type: 'integer', value });
const decodeAll = (frames: Buffer[]): RespValue[] => frames.map((f) => decodeReply(f));

let client: RespClient;

beforeEach(async () => {
  client = await RespClient.connect();
});

afterEach(() => client.close());

afterAll(async () => {
  const cleaner = await RespClient.connect();
  cleaner.send(encodeCommand(['EVAL', "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end return 0", 0, `${PREFIX}*`]));
  await cleaner.next(1);
  cleaner.close();
});

describe('RESP2 against Redis', () => {
  it('scans pipelined replies to commands encoded in one write, with exact boundaries', async () => {
    const binary = Buffer.from([0, 1, 13, 10, 255, 36, 42]);
    const writer = new RespWriter();
    writer
      .command(['SET', key('a'), 'alpha'])
      .command(['SET', key('bin'), binary])
      .command(['GET', key('a')])
      .command(['GET', key('bin')])
      .command(['GET', key('missing')])
      .command(['MGET', key('a'), key('missing'), key('bin')])
      .command(['INCRBY', key('n'), 5])
      .command(['INCR', key('a')])
      .command(['RPUSH', key('list'), 'x', 'y', 'z'])
      .command(['LRANGE', key('list'), 0, -1])
      .command(['EXISTS', key('a'), key('missing'), key('n')]);
    client.send(writer.flush());
    const frames = await client.next(11);
    expect(Buffer.concat(frames).equals(Buffer.concat(client.received))).toBe(true);
    expect(decodeAll(frames)).toEqual([
      { type: 'simple', value: 'OK' },
      { type: 'simple', value: 'OK' },
      bulk('alpha'),
      bulk(binary),
      { type: 'null', form: 'bulk' },
      { type: 'array', items: [bulk('alpha'), { type: 'null', form: 'bulk' }, bulk(binary)] },
      int(5),
      { type: 'error', message: 'ERR value is not an integer or out of range', bulk: false },
      int(3),
      { type: 'array', items: [bulk('x'), bulk('y'), bulk('z')] },
      int(2),
    ]);
  });

  it('scans a multi-megabyte reply that arrives in many TCP chunks', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 7, 'r');
    big[1000] = 13;
    big[1001] = 10;
    client.send(Buffer.concat([encodeCommand(['SET', key('big'), big]), encodeCommand(['GET', key('big')]), encodeCommand(['PING'])]));
    const [ok, value, pong] = await client.next(3, 10_000);
    expect(client.chunks).toBeGreaterThan(3);
    expect(decodeReply(ok)).toEqual({ type: 'simple', value: 'OK' });
    const decoded = decodeReply(value);
    expect(decoded.type === 'bulk' && decoded.value.equals(big)).toBe(true);
    expect(decodeReply(pong)).toEqual({ type: 'simple', value: 'PONG' });
  });
});

describe('RESP3 against Redis (HELLO 3)', () => {
  const lua = (body: string): Buffer => encodeCommand(['EVAL', `redis.setresp(3); ${body}`, 0]);

  it('scans and decodes maps, sets, doubles, nulls, booleans, big numbers and verbatim strings', async () => {
    client.send(Buffer.concat([
      encodeCommand(['HELLO', 3]),
      encodeCommand(['HSET', key('h'), 'f1', 'v1', 'f2', 'v2']),
      encodeCommand(['HGETALL', key('h')]),
      encodeCommand(['SADD', key('s'), 'm1', 'm2']),
      encodeCommand(['SMEMBERS', key('s')]),
      encodeCommand(['ZADD', key('z'), '2.5', 'm']),
      encodeCommand(['ZSCORE', key('z'), 'm']),
      encodeCommand(['GET', key('nothing')]),
      lua('return true'),
      lua("return {big_number='123456789012345678901234567890'}"),
      lua('return {double=-0.125}'),
      encodeCommand(['CLIENT', 'INFO']),
    ]));
    const frames = await client.next(12);
    const values = decodeAll(frames);
    const hello = values[0];
    expect(hello.type).toBe('map');
    expect(hello.type === 'map' && hello.entries.find(([k]) => k.type === 'bulk' && k.value.toString() === 'proto')?.[1]).toEqual(int(3));
    const asText = (v: RespValue): string => (v.type === 'bulk' ? v.value.toString() : v.type);
    const hgetall = values[2];
    expect(hgetall.type === 'map' && hgetall.entries.map(([k, v]) => `${asText(k)}=${asText(v)}`).sort()).toEqual(['f1=v1', 'f2=v2']);
    const members = values[4];
    expect(members.type === 'set' && members.items.map(asText).sort()).toEqual(['m1', 'm2']);
    expect(values[6]).toEqual({ type: 'double', value: 2.5 });
    expect(values[7]).toEqual({ type: 'null', form: 'null' });
    expect(client.flags[7]).toBe(ReplyFlag.Null);
    expect(frames[7].toString()).toBe('_\r\n');
    expect(values[8]).toEqual({ type: 'boolean', value: true });
    expect(values[9]).toEqual({ type: 'bignum', value: 123456789012345678901234567890n });
    expect(values[10]).toEqual({ type: 'double', value: -0.125 });
    const info = values[11];
    expect(info.type === 'verbatim' && info.format === 'txt' && info.value.toString().includes('resp=3')).toBe(true);
  });

  it('flags pub/sub pushes and keeps them in order with ordinary replies', async () => {
    const publisher = await RespClient.connect();
    const channel = key('channel');
    client.send(Buffer.concat([encodeCommand(['HELLO', 3]), encodeCommand(['SUBSCRIBE', channel])]));
    const [, confirmation] = await client.next(2);
    publisher.send(encodeCommand(['PUBLISH', channel, 'hello\r\nworld']));
    expect(decodeReply((await publisher.next(1))[0])).toEqual(int(1));
    client.send(encodeCommand(['PING']));
    const [message, pong] = await client.next(2);
    publisher.close();

    expect(confirmation[0]).toBe(RespType.Push);
    expect(parsePubSub(decodeReply(confirmation))).toEqual({ kind: 'subscribe', channel: Buffer.from(channel), count: 1 });
    expect(parsePubSub(decodeReply(message))).toEqual({ kind: 'message', channel: Buffer.from(channel), payload: Buffer.from('hello\r\nworld') });
    expect(decodeReply(pong)).toEqual({ type: 'simple', value: 'PONG' });
    // What a proxy reads from the scanner, without decoding: pushes are flagged out-of-band.
    expect(client.flags).toEqual([0, ReplyFlag.Push, ReplyFlag.Push, 0]);
  });
});

describe('inline commands against Redis', () => {
  const lines = [
    `SET ${key('i1')} "hello world\\x41\\n\\t\\"q\\""\r\n`,
    `SET ${key('i2')} 'single \\' quote \\n'\n`,
    `SET ${key('i3')} ab"cd ef"\r\n`,
    `SET   ${key('i4')}\t  plain\x0bvalue   \r\n`,
    `SET ${key('i5')} ""\r\n`,
  ];

  it('unquotes inline arguments exactly as Redis does', async () => {
    const scanner = new CommandScanner();
    const batch = scanner.scan(Buffer.from(lines.join(''), 'latin1'));
    expect(batch.count).toBe(lines.length);
    const ours = Array.from({ length: batch.count }, (_, i) => batch.argToBuffer(i, 2));
    client.send(Buffer.from(lines.join(''), 'latin1'));
    expect(decodeAll(await client.next(lines.length))).toEqual(lines.map(() => ({ type: 'simple', value: 'OK' })));
    client.send(Buffer.concat(lines.map((_, i) => encodeCommand(['GET', key(`i${i + 1}`)]))));
    expect(decodeAll(await client.next(lines.length))).toEqual(ours.map((value) => bulk(value)));
  });
});

describe('protocol errors read the same as Redis', () => {
  const cases: Array<[string, Buffer, Partial<RespLimits>]> = [
    ['invalid multibulk length', Buffer.from('*3x\r\n'), {}],
    ['invalid bulk length', Buffer.from('*1\r\n$-5\r\n'), {}],
    ['expected $', Buffer.from('*1\r\n:5\r\n'), {}],
    ['unbalanced quotes', Buffer.from('SET k "abc\r\n'), {}],
    ['too big inline request', Buffer.alloc(70 * 1024, 'a'), {}],
  ];

  it.each(cases)('%s', async (_name, bytes) => {
    let ours = '';
    try {
      new CommandScanner().scan(bytes);
    } catch (err) {
      ours = (err as Error).message;
    }
    client.send(bytes);
    const [reply] = await client.next(1);
    expect(decodeReply(reply)).toEqual({ type: 'error', message: `ERR ${ours}`, bulk: false });
    await client.closedByServer();
  });
});
