// What one client can send cannot disturb the shared backend connections of others: inline lines
// are re-encoded (a NUL refused), malformed RESP is refused as Redis refuses it, POST/Host: close
// only that client; a busy script is answered -BUSY and SCRIPT/FUNCTION KILL get through; errors
// name the shard; cross-shard MSETNX is refused; RANDOMKEY answers from every shard.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { startRedis, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';
import { RawClient } from './raw-client';

jest.setTimeout(60_000);

const COMMAND_TIMEOUT_SECONDS = 10;

/** A client of the proxy that GETs known keys of both shards in a loop, recording every latency and wrong reply. */
class Prober {
  readonly latencies: number[] = [];
  readonly wrong: string[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly client: Redis,
    private readonly keys: readonly string[],
  ) {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async loop(): Promise<void> {
    for (let n = 0; this.running; n++) {
      const key = this.keys[n % this.keys.length];
      const started = performance.now();
      try {
        const value = await this.client.get(key);
        if (value !== `v:${key}`) this.wrong.push(`${key}=${value}`);
      } catch (err) {
        this.wrong.push(`${key}: ${(err as Error).message}`);
      }
      this.latencies.push(performance.now() - started);
      await new Promise((r) => setImmediate(r)); // never starve the event loop, even if replies come at once
    }
  }
}

async function direct(server: RedisServer): Promise<Redis> {
  const r = new Redis({ host: '127.0.0.1', port: server.port, maxRetriesPerRequest: 0 });
  await r.ping();
  return r;
}

/** The reply the server itself gives to `bytes` on a connection of its own, and whether it closed it. */
async function serverAnswer(port: number, bytes: Buffer): Promise<{ texts: unknown[]; closed: boolean }> {
  const raw = await RawClient.open(port);
  raw.writeRaw(bytes);
  const texts = await raw.textsUntilClosed();
  const closed = raw.closed;
  raw.close();
  return { texts, closed };
}

describe('command mode: one client cannot disturb the shared backend connections', () => {
  let a: ReplicatedServers<RedisServer>;
  let b: ReplicatedServers<RedisServer>;
  let edge: EdgeHarness;
  let directA: Redis;
  let directB: Redis;
  const keys = Array.from({ length: 20 }, (_, i) => `probe:${i}`);
  const onShard: Record<'a' | 'b', string[]> = { a: [], b: [] };

  beforeAll(async () => {
    [a, b] = await Promise.all([startRedis({ replicas: 0 }), startRedis({ replicas: 0 })]);
    edge = await startEdge({
      mode: 'command',
      redis: `command_timeout_seconds = ${COMMAND_TIMEOUT_SECONDS}\ncross_shard_writes = true`,
      sharding: 'default_shard = "a"\nmap = { kind = "hash", shards = ["a", "b"] }',
      backends: [
        { name: 'a1', port: a.primary.port, role: 'primary', shard: 'a' },
        { name: 'b1', port: b.primary.port, role: 'primary', shard: 'b' },
      ],
    });
    [directA, directB] = await Promise.all([direct(a.primary), direct(b.primary)]);
    const c = edge.client();
    for (const k of keys) await c.set(k, `v:${k}`);
    for (const k of keys) onShard[(await directA.exists(k)) ? 'a' : 'b'].push(k);
    expect(onShard.a.length).toBeGreaterThan(0);
    expect(onShard.b.length).toBeGreaterThan(0);
  });
  afterAll(async () => {
    directA?.disconnect();
    directB?.disconnect();
    await edge?.stop();
    await Promise.all([a?.destroy(), b?.destroy()]);
  });

  it('refuses an inline NUL at once; the other clients of the backend do not wait for it', async () => {
    const prober = new Prober(edge.client(), keys);
    await new Promise((r) => setTimeout(r, 200));
    const raw = await RawClient.open(edge.rwPort);
    raw.writeRaw(Buffer.from('GET a\x00b\r\n', 'latin1'));
    expect(await raw.texts(1)).toEqual(['-ERR Protocol error: NUL byte in inline request']);
    expect(await raw.waitClosed()).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    await prober.stop();
    expect(prober.wrong).toEqual([]);
    expect(Math.max(...prober.latencies)).toBeLessThan(1000);
  });

  it('sends inline commands as the arguments Redis would split them into', async () => {
    const raw = await RawClient.open(edge.rwPort);
    raw.writeRaw(Buffer.from(`SET "in 1" 'it\\'s'\nSET in2 "\\x41\\tB\\"" \r\n  GET   "in 1"  \r\n\r\nECHO ab"c d"\r\n`, 'latin1'));
    expect(await raw.texts(4)).toEqual(['OK', 'OK', "it's", 'abc d']);
    raw.writeRaw('ECHO "x\r\n');
    expect(await raw.textsUntilClosed()).toEqual(['-ERR Protocol error: unbalanced quotes in request']);
    expect(await raw.waitClosed()).toBe(true);
    const both = [await directA.get('in2'), await directB.get('in2')];
    expect(both).toContain('A\tB"');
    expect(await edge.client().get('in 1')).toBe("it's");
  });

  it('refuses malformed RESP with the Redis error and closes only that client', async () => {
    const shapes = [
      '*2\r\n$3\r\nGET\r\n$-2\r\n',
      '*1\r\n+GET\r\n',
      '*99999999999\r\n',
      '*2147483648\r\n',
      '*-\r\n',
      '*1\r\n$01\r\nx\r\n',
      '*1\r\n$+1\r\nx\r\n',
      `*1\r\n$${512 * 1024 * 1024 + 1}\r\n`,
      `GET "${'x'.repeat(70 * 1024)}`,
    ];
    const prober = new Prober(edge.client(), keys);
    for (const shape of shapes) {
      const bytes = Buffer.from(shape, 'latin1');
      const expected = await serverAnswer(a.primary.port, bytes);
      expect(expected.closed).toBe(true);
      expect(String(expected.texts.at(-1))).toMatch(/^-ERR Protocol error: /);
      const raw = await RawClient.open(edge.rwPort);
      raw.writeRaw(bytes);
      expect([shape.slice(0, 40), await raw.textsUntilClosed()]).toEqual([shape.slice(0, 40), expected.texts]);
      expect(raw.closed).toBe(true);
    }
    // Bulk data not followed by CRLF: Redis would skip two bytes whatever they are; the proxy refuses it.
    const raw = await RawClient.open(edge.rwPort);
    raw.writeRaw('*1\r\n$4\r\nPINGxx');
    expect(await raw.texts(1)).toEqual(["-ERR Protocol error: expected '\\r\\n' after bulk data"]);
    await prober.stop();
    expect(prober.wrong).toEqual([]);
    expect(Math.max(...prober.latencies)).toBeLessThan(1000);
  });

  it('closes a client sending POST or Host: as Redis does, without closing the shared connection', async () => {
    const before = (await directA.client('LIST')) as string;
    const proxyIds = before.split('\n').filter((l) => l && !l.includes('cmd=client|list')).map((l) => /id=(\d+)/.exec(l)?.[1]);
    expect(proxyIds.length).toBeGreaterThan(0);
    for (const bytes of ['POST / HTTP/1.1\r\nHost: example\r\n\r\n', '*2\r\n$5\r\nHost:\r\n$1\r\nx\r\n', '*1\r\n$4\r\npost\r\n']) {
      const raw = await RawClient.open(edge.rwPort);
      raw.writeRaw(bytes);
      expect(await raw.textsUntilClosed()).toEqual([]);
      expect(raw.closed).toBe(true);
    }
    expect(await edge.client().get(onShard.a[0])).toBe(`v:${onShard.a[0]}`);
    const after = (await directA.client('LIST')) as string;
    for (const id of proxyIds) expect(after).toContain(`id=${id} `);
  });

  it('survives a fuzzer on one client while another reads the same backends', async () => {
    const prober = new Prober(edge.client(), keys);
    const inlineShape = fc
      .array(fc.constantFrom('GET', 'SET', 'a', ' ', '\t', '"', "'", '\\', '\\x4', '\\x41', '\x00', '\r', '\n', '\r\n', 'ab"c', '*', '$', '-1', '99'), { minLength: 1, maxLength: 12 })
      .map((parts) => Buffer.from(parts.join(''), 'latin1'));
    const respShape = fc
      .tuple(fc.constantFrom('*', '*1', '*2', '*-1', '*0', '*3', '*99999999999'), fc.constantFrom('\r\n', '\n', '\r', ''), fc.constantFrom('$3', '$-1', '$x', '$4', '+', ''), fc.constantFrom('\r\nGET', '\r\nGE', '\nGET', ''), fc.constantFrom('\r\n', 'xx', '\x00', ''))
      .map((parts) => Buffer.from(parts.join(''), 'latin1'));
    const bytes = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((u) => Buffer.from(u));
    await fc.assert(
      fc.asyncProperty(fc.oneof(inlineShape, respShape, bytes), async (input) => {
        const raw = await RawClient.open(edge.rwPort);
        raw.writeRaw(input);
        await raw.waitClosed(60);
        raw.close();
      }),
      { numRuns: 150 },
    );
    await new Promise((r) => setTimeout(r, 300));
    await prober.stop();
    expect(prober.wrong).toEqual([]);
    expect(prober.latencies.length).toBeGreaterThan(20);
    expect(Math.max(...prober.latencies)).toBeLessThan(1000);
  });

  it('relays -BUSY while a script runs and keeps the backend in the topology', async () => {
    await directA.config('SET', 'busy-reply-threshold', '100');
    const stateful = edge.client({ connectionName: 'stateful' }); // own connections, opened before the script: not behind it
    expect(await stateful.get(onShard.a[0])).toBe(`v:${onShard.a[0]}`);
    const script = edge.client().eval('while true do end', 0).then(
      () => 'returned',
      (err: Error) => err.message,
    );
    await new Promise((r) => setTimeout(r, 1500)); // several health rounds while the server answers BUSY
    await expect(stateful.get(onShard.a[0])).rejects.toThrow(/^BUSY /);
    expect(await stateful.get(onShard.b[0])).toBe(`v:${onShard.b[0]}`);
    expect(await directA.script('KILL')).toBe('OK');
    expect(await script).toMatch(/killed/i);
    expect(await edge.client().get(onShard.a[0])).toBe(`v:${onShard.a[0]}`);
  });

  /** Waits up to 1 s for `kill`; past that, kills on the server directly (so the next tests run) and returns 'late'. */
  async function within1s(kill: Promise<unknown>): Promise<{ reply: unknown; ms: number }> {
    const t0 = Date.now();
    const reply = await Promise.race([kill, new Promise((r) => setTimeout(() => r('late'), 1000))]);
    const ms = Date.now() - t0;
    if (reply === 'late') await directA.script('KILL').catch(() => directA.function('KILL').catch(() => undefined));
    return { reply, ms };
  }

  function settled(p: Promise<unknown>): Promise<string> {
    return p.then(
      () => 'returned',
      (err: Error) => err.message,
    );
  }

  // A client connecting during the script (ioredis sends CLIENT SETINFO first, unknown to Redis 7.0)
  // and a client whose session carries a name and a db (CLIENT SETNAME, SELECT: not allow-busy) both
  // get their kill through at once, on fresh connections of its own.
  it('gets SCRIPT KILL and FUNCTION KILL through at once while a script runs', async () => {
    await directA.config('SET', 'busy-reply-threshold', '100');
    const runner = edge.client();
    const named = edge.client({ connectionName: 'killer', db: 1 });
    const plain = edge.client();
    expect(await named.ping()).toBe('PONG');
    expect(await plain.ping()).toBe('PONG');
    const script = settled(runner.eval('while true do end', 0));
    await new Promise((r) => setTimeout(r, 400));
    const unknown = await within1s(plain.call('CLIENT', 'NOSUCHSUB').catch((err: Error) => err.message)); // not queued behind the script
    expect(unknown.reply).toMatch(/^ERR unknown subcommand 'NOSUCHSUB'/);
    const scriptKill = await within1s(edge.client({ enableReadyCheck: false }).script('KILL'));
    expect(scriptKill.reply).toBe('OK');
    expect(scriptKill.ms).toBeLessThan(1000);
    expect(await script).toMatch(/killed/i);

    await runner.function('LOAD', 'REPLACE', "#!lua name=spinlib\nredis.register_function('spin', function() while true do end end)");
    const fcall = settled(runner.fcall('spin', 0));
    await new Promise((r) => setTimeout(r, 400));
    const pipelined = await within1s(runner.function('KILL')); // the same client, pipelined behind its own FCALL
    expect(pipelined.reply).toBe('OK');
    expect(await fcall).toMatch(/killed/i);

    const again = settled(runner.fcall('spin', 0));
    await new Promise((r) => setTimeout(r, 400));
    const stateful = await within1s(named.function('KILL'));
    expect(stateful.reply).toBe('OK');
    expect(stateful.ms).toBeLessThan(1000);
    expect(await again).toMatch(/killed/i);

    const other = edge.client();
    expect(await other.get(onShard.a[0])).toBe(`v:${onShard.a[0]}`);
    expect(await other.get(onShard.b[0])).toBe(`v:${onShard.b[0]}`);
    expect(await runner.get(onShard.a[1])).toBe(`v:${onShard.a[1]}`);
    expect(await named.client('GETNAME')).toBe('killer');
    await expect(named.script('KILL')).rejects.toThrow(/^NOTBUSY /);
    await runner.function('DELETE', 'spinlib');
  });

  it('answers a subcommand the server does not list with the error Redis gives', async () => {
    const c = edge.client();
    const viaProxy = await c.call('CLIENT', 'NOSUCHSUB', 'x').then(String, (err: Error) => err.message);
    const fromServer = await directA.call('CLIENT', 'NOSUCHSUB', 'x').then(String, (err: Error) => err.message);
    expect(viaProxy).toBe(fromServer);
    expect(viaProxy).toBe("ERR unknown subcommand 'NOSUCHSUB'. Try CLIENT HELP.");
  });

  it('refuses MSETNX across shards (setting nothing) and answers RANDOMKEY from every shard', async () => {
    const c = edge.client();
    const pair = [onShard.a[1], onShard.b[1]].map((k) => `nx:${k}`);
    await expect(c.msetnx(pair[0], '1', pair[1], '1')).rejects.toThrow(/^CROSSSLOT 'MSETNX' spans several shards/);
    expect(await c.exists(...pair)).toBe(0);
    expect(await c.msetnx('{nx}1', '1', '{nx}2', '2')).toBe(1);
    const seen = new Set<string>();
    for (let n = 0; n < 60; n++) seen.add((await c.randomkey()) as string);
    expect([...seen].some((k) => onShard.a.includes(k))).toBe(true);
    expect([...seen].some((k) => onShard.b.includes(k))).toBe(true);
  });

  it('relays a script reply nested far deeper than 128 levels exactly as the server gives it, on the shared connection', async () => {
    const nest = 'local t = {7} for i = 1, tonumber(ARGV[1]) do t = {t} end return t';
    const c = edge.client();
    await c.get(onShard.a[0]);
    const proxyConnections = async () => String(await directA.client('LIST')).split('\n').filter((l) => l && !l.includes('cmd=client|list')).map((l) => /id=(\d+)/.exec(l)?.[1]);
    const before = await proxyConnections();
    for (const depth of [200, 2_000]) {
      const viaProxy = await c.eval(nest, 0, String(depth));
      expect(JSON.stringify(viaProxy)).toBe(JSON.stringify(await directA.eval(nest, 0, String(depth))));
    }
    expect(await c.get(onShard.a[0])).toBe(`v:${onShard.a[0]}`);
    expect(await proxyConnections()).toEqual(expect.arrayContaining(before));
  });

  it('names the shard that has no usable primary', async () => {
    await b.primary.stop();
    const c = edge.client();
    const deadline = Date.now() + 10_000;
    let message = '';
    while (Date.now() < deadline && !message.includes('no usable')) {
      message = await c.get(onShard.b[0]).then(String, (err: Error) => err.message);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(message).toBe('ERR no usable primary backend for shard "b"');
    await expect(c.mget(onShard.a[0], onShard.b[0])).rejects.toThrow('no usable primary backend for shard "b"');
    await expect(c.dbsize()).rejects.toThrow('no usable primary backend for shard "b"');
    expect(await c.get(onShard.a[0])).toBe(`v:${onShard.a[0]}`);
  });
});
