// Fail static on NATS: stopping and restarting nats-server never crashes a bus user; status
// follows the outage, and subscriptions and KV watches resume when the server returns.
import { startNats, type NatsServer } from '@dbproxy/testing';
import { createBus, droppedMessageCounts, type Bus, type BusStatus, type KvEntry } from '../src/index';
import { eventually } from './contract';

jest.setTimeout(60_000);

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('NATS outage', () => {
  let server: NatsServer;
  const buses: Bus[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

  const open = async (name: string, connect = true, reconnectBufferBytes?: number): Promise<Bus> => {
    const bus = createBus({ name, natsUrl: server.url, reconnectWaitMs: 200, connectTimeoutMs: 1000, ...(reconnectBufferBytes ? { reconnectBufferBytes } : {}) });
    buses.push(bus);
    if (connect) await bus.waitForConnection(5000);
    return bus;
  };

  beforeAll(async () => {
    server = await startNats();
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close()));
    if (server.pid === undefined) await server.start();
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await server?.destroy();
  });

  it('survives a server restart: status follows, subscription and watch resume, KV data is kept', async () => {
    const [consumer, producer] = [await open('consumer'), await open('producer')];
    const statuses: BusStatus[] = [];
    consumer.onStatus((s) => statuses.push(s));

    const ticks: number[] = [];
    await consumer.subscribe('outage.tick', (m) => void ticks.push(Number(dec.decode(m.data)))).ready;
    const consumerKv = await consumer.kv('outage');
    const producerKv = await producer.kv('outage');
    await producerKv.put('config', enc.encode('before'));
    const watched: KvEntry[] = [];
    await consumerKv.watch('>', (e) => void watched.push(e)).ready;
    expect(watched.map((e) => dec.decode(e.value))).toEqual(['before']);

    // A publisher that keeps going through the outage and must never throw.
    let seq = 0;
    const publishErrors: unknown[] = [];
    const publisher = setInterval(() => {
      try {
        producer.publish('outage.tick', enc.encode(String(++seq)));
      } catch (err) {
        publishErrors.push(err);
      }
    }, 20);

    try {
      await eventually(() => ticks.length >= 5, 3000, 'ticks before the outage');
      await server.stop();
      await eventually(() => consumer.status() === 'disconnected' && producer.status() === 'disconnected', 5000, 'disconnected status');
      const lastSeqDuringOutage = seq;

      // While away: requests and KV operations fail fast with a typed error, nothing crashes.
      await expect(consumer.request('outage.rpc', enc.encode('q'), { timeoutMs: 1000 })).rejects.toMatchObject({ code: 'DBP_ERR_BUS_UNAVAILABLE' });
      await expect(consumerKv.get('config')).rejects.toMatchObject({ code: 'DBP_ERR_BUS_UNAVAILABLE' });
      await new Promise((r) => setTimeout(r, 300));

      await server.start();
      const restartedAt = Date.now();
      await eventually(() => consumer.status() === 'connected' && producer.status() === 'connected', 5000, 'reconnection');

      await eventually(() => ticks.some((t) => t > lastSeqDuringOutage + 5), 5000, 'ticks after the restart');
      await producerKv.put('config', enc.encode('after'));
      await eventually(() => watched.some((e) => dec.decode(e.value) === 'after'), 5000, 'watch update after the restart');
      expect(Date.now() - restartedAt).toBeLessThan(8000);

      // The watch resumed where it stopped: no entry twice, revisions strictly increasing.
      const revisions = watched.map((e) => e.revision);
      expect(revisions).toEqual([...new Set(revisions)].sort((a, b) => a - b));
      expect(dec.decode((await consumerKv.get('config'))?.value)).toBe('after');
      expect(statuses).toEqual(['disconnected', 'connected']);
      expect(publishErrors).toEqual([]);
      expect(unhandled).toEqual([]);
    } finally {
      clearInterval(publisher);
    }
  });

  it('delivers the latest value to a watch that missed updates while its own connection was down', async () => {
    const watcher = await open('watcher');
    const kv = await watcher.kv('missed');
    await kv.put('current', enc.encode('1'));
    const seen: string[] = [];
    await kv.watch('current', (e) => void seen.push(dec.decode(e.value))).ready;

    await server.stop();
    await eventually(() => watcher.status() === 'disconnected', 5000);
    await server.start();
    // Another service writes as soon as the server is back, before (or while) the watcher reconnects.
    const writer = await open('writer');
    const wkv = await writer.kv('missed');
    await wkv.put('current', enc.encode('2'));
    await wkv.put('current', enc.encode('3'));
    await eventually(() => seen.at(-1) === '3', 5000, 'latest value');
    expect(seen[0]).toBe('1');
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('buffers publishes made during the outage up to the bound, sends them on reconnection, drops the rest', async () => {
    const producer = await open('buffering', true, 1100); // five 200-byte messages (+ subject)
    // Subscribed on the same connection: nats.js re-subscribes before it flushes the buffer,
    // so this subscriber sees exactly what the buffer carried across the outage.
    const got: number[] = [];
    await producer.subscribe('buffered.x', (m) => void got.push(m.data[0] ?? -1)).ready;
    await server.stop();
    await eventually(() => producer.status() === 'disconnected', 5000);
    const before = droppedMessageCounts()['publish-failed'];
    for (let i = 0; i < 10; i++) producer.publish('buffered.x', new Uint8Array(200).fill(i));
    expect(droppedMessageCounts()['publish-failed']).toBe(before + 5);
    expect(got).toEqual([]);

    await server.start();
    await eventually(() => producer.status() === 'connected', 5000);
    producer.publish('buffered.x', new Uint8Array(1).fill(99));
    await eventually(() => got.includes(99), 5000);
    expect(got).toEqual([0, 1, 2, 3, 4, 99]);
  });

  it('starts without a server: stays disconnected, keeps subscriptions and watches, and attaches them when NATS appears', async () => {
    await server.stop();
    const bus = await open('early', false);
    expect(bus.status()).toBe('disconnected');
    await expect(bus.waitForConnection(300)).rejects.toMatchObject({ code: 'DBP_ERR_BUS_CONNECT_TIMEOUT' });

    const got: string[] = [];
    const sub = bus.subscribe('early.>', (m) => void got.push(dec.decode(m.data)));
    const dropsBefore = droppedMessageCounts()['publish-failed'];
    expect(() => bus.publish('early.x', enc.encode('sent before NATS existed'))).not.toThrow();
    expect(droppedMessageCounts()['publish-failed']).toBe(dropsBefore);
    const kv = await bus.kv('early');
    await expect(kv.put('k', enc.encode('v'))).rejects.toMatchObject({ code: 'DBP_ERR_BUS_UNAVAILABLE' });
    const watched: string[] = [];
    const watch = kv.watch('>', (e) => void watched.push(`${e.key}=${dec.decode(e.value)}`));

    await server.start();
    await bus.waitForConnection(5000);
    await sub.ready;
    await watch.ready;
    const other = await open('other');
    other.publish('early.x', enc.encode('hello'));
    await (await other.kv('early')).put('k', enc.encode('v1'));
    await eventually(() => got.includes('hello') && watched.includes('k=v1'), 5000, 'late attachment');
    expect(got[0]).toBe('sent before NATS existed');
  });

  it('closes promptly while the server is away', async () => {
    const bus = await open('closer');
    const kv = await bus.kv('closing');
    kv.watch('>', () => undefined);
    bus.subscribe('closing.>', () => undefined);
    await server.stop();
    await eventually(() => bus.status() === 'disconnected', 5000);
    const started = Date.now();
    await bus.close();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(bus.status()).toBe('closed');
  });
});
