// Command mode over two standalone shards (hash map; each with a replica): replies equal a
// direct connection's, multi-key commands split and merge, cluster-wide commands, connection
// state, transactions, pub/sub, blocking commands, the read-only listener and backpressure.
import { Redis } from 'ioredis';
import { startRedis, waitFor, type ReplicatedServers, type RedisServer } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';
import { redisCli } from './processes';
import { RawClient } from './raw-client';
import { mixedCommands, runPipeline } from './workload';

jest.setTimeout(120_000);

describe('command mode over two standalone shards', () => {
  let a: ReplicatedServers<RedisServer>;
  let b: ReplicatedServers<RedisServer>;
  let direct: ReplicatedServers<RedisServer>;
  let edge: EdgeHarness;
  const node = (port: number) => new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0 });

  beforeAll(async () => {
    [a, b, direct] = await Promise.all([startRedis({ replicas: 1 }), startRedis({ replicas: 1 }), startRedis({ replicas: 0 })]);
    edge = await startEdge({
      mode: 'command',
      redis: 'cross_shard_writes = true',
      sharding: 'default_shard = "a"\nmap = { kind = "hash", shards = ["a", "b"] }',
      backends: [
        { name: 'a1', port: a.primary.port, role: 'primary', shard: 'a' },
        { name: 'a2', port: a.replicas[0].port, role: 'replica', shard: 'a' },
        { name: 'b1', port: b.primary.port, role: 'primary', shard: 'b' },
        { name: 'b2', port: b.replicas[0].port, role: 'replica', shard: 'b' },
      ],
    });
  });
  afterAll(async () => {
    await edge?.stop();
    await Promise.all([a?.destroy(), b?.destroy(), direct?.destroy()]);
  });

  it('routes by what the topology service found: each shard a healthy primary and an in-sync replica', async () => {
    const published = async () =>
      ((await edge.topology()).snapshot?.shards ?? []).map((s) => ({ shard: s.shard, backends: s.backends.map((x) => [x.name, x.role, x.healthy, x.lagging]) })).sort((x, y) => x.shard.localeCompare(y.shard));
    const expected = [
      { shard: 'a', backends: [['a1', 'primary', true, false], ['a2', 'replica', true, false]] },
      { shard: 'b', backends: [['b1', 'primary', true, false], ['b2', 'replica', true, false]] },
    ];
    // a replica's lag may be unknown at the very first check; the next ones (0.3 s apart) measure it
    await waitFor(async () => JSON.stringify(await published()) === JSON.stringify(expected), { timeoutMs: 5000, description: 'both replicas checked in sync' }).catch(() => undefined);
    expect(await published()).toEqual(expected);
    const view = (await (await fetch(`${edge.admin}/redis/edge`)).json()) as { shards: { shard: string; primary: string | null; replicas: string[] }[] };
    expect(view.shards.sort((x, y) => x.shard.localeCompare(y.shard))).toEqual([
      { shard: 'a', primary: `127.0.0.1:${a.primary.port}`, replicas: [`127.0.0.1:${a.replicas[0].port}`] },
      { shard: 'b', primary: `127.0.0.1:${b.primary.port}`, replicas: [`127.0.0.1:${b.replicas[0].port}`] },
    ]);
  });

  it('gives 10,000 mixed pipelined commands the same replies as a direct connection', async () => {
    const commands = mixedCommands(10_000, 42, 'mix', { multiKey: true });
    const proxied = edge.client();
    const plain = node(direct.primary.port);
    const [through, reference] = [await runPipeline(proxied, commands), await runPipeline(plain, commands)];
    plain.disconnect();
    expect(through).toHaveLength(10_000);
    const mismatches = through.flatMap((r, i) => (JSON.stringify(r) === JSON.stringify(reference[i]) ? [] : [{ i, command: commands[i], through: r, direct: reference[i] }]));
    expect(mismatches.slice(0, 5)).toEqual([]);
    // both shards hold data: the hash map spread the keys
    const [na, nb] = [node(a.primary.port), node(b.primary.port)];
    expect(await na.dbsize()).toBeGreaterThan(10);
    expect(await nb.dbsize()).toBeGreaterThan(10);
    expect((await na.dbsize()) + (await nb.dbsize())).toBe(await plain.connect().then(() => plain.dbsize()).finally(() => plain.disconnect()));
    na.disconnect();
    nb.disconnect();
    // per-route command counts reach the counter once a second
    await waitFor(async () => (await edge.metric('dbproxy_redis_commands_total', { shard: 'a' })) > 0, { timeoutMs: 3000, description: "shard a's command counts published" });
    expect(await edge.metric('dbproxy_redis_fanouts_total')).toBeGreaterThan(0);
  });

  it('splits multi-key commands per shard and merges: MGET keeps order, DEL/EXISTS/TOUCH/UNLINK sum, MSET is OK when all parts are', async () => {
    const c = edge.client();
    const keys = Array.from({ length: 20 }, (_, i) => `split:${i}`);
    expect(await c.mset(...keys.flatMap((k, i) => [k, `v${i}`]))).toBe('OK');
    expect(await c.mget(...keys, 'split:none')).toEqual([...keys.map((_, i) => `v${i}`), null]);
    expect(await c.exists(...keys, 'split:none', keys[0])).toBe(21);
    expect(await c.touch(...keys)).toBe(20);
    expect(await c.unlink(keys[0], keys[1])).toBe(2);
    expect(await c.del(...keys)).toBe(18);
    // DBSIZE sums both shards; KEYS collects them; FLUSHDB reaches both
    await c.mset('dbsize:1', 1, 'dbsize:2', 2, 'dbsize:3', 3, 'dbsize:4', 4);
    const [na, nb] = [node(a.primary.port), node(b.primary.port)];
    expect(await c.dbsize()).toBe((await na.dbsize()) + (await nb.dbsize()));
    expect((await c.keys('dbsize:*')).sort()).toEqual(['dbsize:1', 'dbsize:2', 'dbsize:3', 'dbsize:4']);
    na.disconnect();
    nb.disconnect();
  });

  it('scans every shard with one composite cursor', async () => {
    const c = edge.client();
    const keys = Array.from({ length: 200 }, (_, i) => `scan:${i}`);
    await c.mset(...keys.flatMap((k) => [k, '1']));
    const seen = new Set<string>();
    let cursor = '0';
    let rounds = 0;
    do {
      const [next, batch] = await c.scan(cursor, 'MATCH', 'scan:*', 'COUNT', 50);
      batch.forEach((k) => seen.add(k));
      cursor = next;
      rounds++;
    } while (cursor !== '0' && rounds < 1000);
    expect([...seen].sort()).toEqual([...keys].sort());
    await expect(c.call('SCAN', 'abc')).rejects.toThrow('invalid cursor');
  });

  it('answers PING and ECHO itself and refuses administrative and connection-level commands with clear errors', async () => {
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['PING'], ['PING', 'hi'], ['ECHO', 'x y'], ['CONFIG', 'GET', 'maxmemory'], ['CLIENT', 'LIST'], ['MONITOR'], ['CLUSTER', 'SLOTS'], ['TIME'], ['CLIENT', 'ID']);
    const replies = await raw.texts(9);
    expect(replies.slice(0, 3)).toEqual(['PONG', 'hi', 'x y']);
    expect(replies[3]).toBe("-ERR 'CONFIG GET' is an administrative command: run it on the server directly or through connection mode");
    expect(replies[4]).toMatch(/^-ERR 'CLIENT LIST' is not supported in command mode/);
    expect(replies[5]).toMatch(/^-ERR 'MONITOR' is not supported in command mode/);
    expect(replies[6]).toBe('-ERR This instance has cluster support disabled');
    expect(replies[7]).toHaveLength(2);
    expect(typeof replies[8]).toBe('number');
    raw.close();
    expect(await edge.metric('dbproxy_redis_rejected_commands_total', { reason: 'administrative' })).toBeGreaterThan(0);
  });

  it('replays SELECT, CLIENT SETNAME and HELLO 3 on every connection it opens for the session', async () => {
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['SELECT', '3'], ['CLIENT', 'SETNAME', 'replayed'], ['HELLO', '3']);
    const [selected, named, hello] = await raw.replies(3);
    expect(selected).toEqual({ type: 'simple', value: 'OK' });
    expect(named).toEqual({ type: 'simple', value: 'OK' });
    expect(hello.type).toBe('map');
    // keys on both shards land in db 3; the session's connections carry its name and RESP3
    raw.send(...Array.from({ length: 10 }, (_, i) => ['SET', `state:${i}`, `${i}`]), ['CLIENT', 'GETNAME'], ['HGETALL', 'state:nohash']);
    const replies = await raw.frames_(12);
    expect(replies.slice(0, 10).every((f) => f.toString() === '+OK\r\n')).toBe(true);
    expect(replies[10].toString()).toBe('$8\r\nreplayed\r\n');
    expect(replies[11].toString()).toBe('%0\r\n'); // a RESP3 map
    for (const port of [a.primary.port, b.primary.port]) {
      const n = new Redis({ host: '127.0.0.1', port, db: 3 });
      expect((await n.keys('state:*')).length).toBeGreaterThan(0);
      const list = (await n.client('LIST')) as string;
      expect(list).toMatch(/name=replayed .* db=3 .*resp=3/);
      n.disconnect();
    }
    raw.close();
  });

  it('runs MULTI/EXEC and WATCH on one shard and refuses transactions across shards', async () => {
    const c = edge.client();
    expect(await c.multi().set('{tx}a', '1').incr('{tx}n').get('{tx}a').exec()).toEqual([
      [null, 'OK'],
      [null, 1],
      [null, '1'],
    ]);
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['MULTI'], ['SET', 'tx:x', '1'], ['SET', 'tx:y', '1'], ['SET', 'tx:z', '1'], ['SET', 'tx:w', '1'], ['EXEC']);
    const replies = await raw.texts(6);
    expect(replies[0]).toBe('OK');
    expect(replies).toContain("-CROSSSLOT Keys in request don't hash to the same shard");
    expect(replies[5]).toBe('-EXECABORT Transaction discarded because of previous errors.');
    // WATCH: another client's write makes EXEC return null
    raw.send(['WATCH', '{w}k'], ['MULTI'], ['SET', '{w}k', 'mine'], ['EXEC']);
    expect(await raw.texts(4)).toEqual(['OK', 'OK', 'QUEUED', ['OK']]);
    raw.send(['WATCH', '{w}k'], ['GET', '{w}k']);
    expect(await raw.texts(2)).toEqual(['OK', 'mine']);
    await c.set('{w}k', 'theirs');
    raw.send(['MULTI'], ['SET', '{w}k', 'mine-again'], ['EXEC']);
    expect(await raw.texts(3)).toEqual(['OK', 'QUEUED', null]);
    expect(await c.get('{w}k')).toBe('theirs');
    raw.close();
  });

  it('delivers pub/sub messages in publish order with confirmations where Redis puts them', async () => {
    const sub = await RawClient.open(edge.rwPort);
    sub.send(['SUBSCRIBE', 'news', 'sports'], ['PSUBSCRIBE', 'n*']);
    expect(await sub.texts(3)).toEqual([
      ['subscribe', 'news', 1],
      ['subscribe', 'sports', 2],
      ['psubscribe', 'n*', 3],
    ]);
    sub.send(['GET', 'x']);
    expect((await sub.texts(1))[0]).toMatch(/^-ERR Can't execute 'GET': only \(P\|S\)SUBSCRIBE/);
    const pub = edge.client();
    for (let i = 0; i < 500; i++) void pub.publish(i % 2 === 0 ? 'news' : 'sports', `m${i}`);
    const messages = (await sub.texts(750)) as string[][];
    const on = (kind: string, channel: string) => messages.filter((m) => m[0] === kind && m[kind === 'pmessage' ? 2 : 1] === channel).map((m) => m[m.length - 1]);
    // each channel's messages arrive in publish order (the two channels may live on different shards)
    expect(on('message', 'news')).toEqual(Array.from({ length: 250 }, (_, i) => `m${i * 2}`));
    expect(on('message', 'sports')).toEqual(Array.from({ length: 250 }, (_, i) => `m${i * 2 + 1}`));
    expect(on('pmessage', 'news')).toEqual(Array.from({ length: 250 }, (_, i) => `m${i * 2}`));
    sub.send(['UNSUBSCRIBE', 'news', 'sports'], ['PING']);
    expect(await sub.texts(3)).toEqual([['unsubscribe', 'news', 2], ['unsubscribe', 'sports', 1], ['pong', '']]);
    sub.send(['PUNSUBSCRIBE'], ['PING']);
    expect(await sub.texts(2)).toEqual([['punsubscribe', 'n*', 0], 'PONG']);
    sub.close();
  });

  it('runs blocking commands on leased connections and closes a lease its client abandoned', async () => {
    const c = edge.client();
    const waiting = c.blpop('queue:1', 5);
    await new Promise((r) => setTimeout(r, 100));
    await edge.client().rpush('queue:1', 'job');
    expect(await waiting).toEqual(['queue:1', 'job']);
    // abandoned: the client disconnects while BLPOP blocks
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['BLPOP', 'queue:abandoned', '0']);
    const shardOf = async () => {
      for (const port of [a.primary.port, b.primary.port]) {
        const n = node(port);
        const list = (await n.client('LIST')) as string;
        n.disconnect();
        if (/flags=\w*b\w* .*cmd=blpop/.test(list)) return port;
      }
      return undefined;
    };
    await waitFor(async () => (await shardOf()) !== undefined, { timeoutMs: 5_000, description: 'BLPOP blocked on a backend' });
    expect(await edge.metric('dbproxy_redis_blocking_leases')).toBeGreaterThan(0);
    raw.close();
    await waitFor(async () => (await shardOf()) === undefined, { timeoutMs: 5_000, description: 'abandoned BLPOP connection closed' });
    await waitFor(async () => (await edge.metric('dbproxy_redis_blocking_lease_events_total', { event: 'abandoned' })) >= 1, { timeoutMs: 5_000 });
    const open = await edge.metric('dbproxy_redis_blocking_leases');
    expect(open).toBeLessThanOrEqual(1); // the returned lease of the first BLPOP may stay idle for reuse
  });

  it('answers WAIT with the replicas that acknowledged the session\'s writes', async () => {
    const c = edge.client();
    await c.set('wait:k', 'v');
    // every shard has one replica: WAIT 1 is met on each, the answer is the smallest (agg_min)
    expect(await c.call('WAIT', '1', '2000')).toBe(1);
    const raw = await RawClient.open(edge.rwPort);
    raw.send(['SET', '{wait}a', '1'], ['WAIT', '2', '100'], ['GET', '{wait}a']);
    expect(await raw.texts(3)).toEqual(['OK', 1, '1']);
    raw.close();
  });

  it('refuses writes, scripts that may write and unknown commands on the read-only listener before routing', async () => {
    const out = await redisCli(edge.roPort, ['SET', 'ro:k', 'v']);
    expect(out.stdout.trim()).toBe("ERR 'SET' writes: it is refused on the read-only listener");
    await edge.client().set('ro:k', 'from-primary');
    await a.waitForReplicaCatchUp();
    const ro = edge.client({ readOnly: true });
    expect(await ro.get('ro:k')).toBe('from-primary');
    await expect(ro.eval('return 1', 0)).rejects.toThrow("'EVAL' may write: use EVAL_RO, EVALSHA_RO or FCALL_RO on the read-only listener");
    await expect(ro.call('NOSUCHCOMMAND')).rejects.toThrow("unknown command 'NOSUCHCOMMAND' is refused on the read-only listener");
    expect(await ro.call('EVAL_RO', 'return 7', 0)).toBe(7);
    expect(await edge.metric('dbproxy_redis_rejected_commands_total', { reason: 'read_only', listener: 'read_only' })).toBeGreaterThan(0);
  });
});
