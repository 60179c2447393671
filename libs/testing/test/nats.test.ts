// startNats: a nats-server with JetStream whose KV data survives a restart on the same port.
import { existsSync } from 'node:fs';
import { connect, type NatsConnection } from 'nats';
import { freePort, startNats, type NatsServer } from '../src';

jest.setTimeout(60_000);

async function withConnection<T>(server: NatsServer, work: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: server.url, reconnect: false });
  try {
    return await work(nc);
  } finally {
    await nc.close();
  }
}

describe('startNats', () => {
  let server: NatsServer;

  beforeAll(async () => {
    server = await startNats();
  });

  afterAll(async () => {
    await server?.destroy();
  });

  it('serves clients on its own port with JetStream enabled', async () => {
    expect(server.port).not.toBe(4222);
    expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
    const info = await withConnection(server, async (nc) => (await nc.jetstreamManager()).getAccountInfo());
    expect(info.streams).toBe(0);
  });

  it('keeps JetStream KV data across stop() and start() on the same port', async () => {
    await withConnection(server, async (nc) => {
      const kv = await nc.jetstream().views.kv('settings');
      await kv.put('mode', 'blue');
    });
    const port = server.port;
    await server.stop();
    await expect(connect({ servers: server.url, reconnect: false })).rejects.toThrow();
    await server.start();
    expect(server.port).toBe(port);
    const value = await withConnection(server, async (nc) => (await (await nc.jetstream().views.kv('settings')).get('mode'))?.string());
    expect(value).toBe('blue');
  });

  it('keeps acknowledged KV data across kill() and start()', async () => {
    await withConnection(server, async (nc) => {
      const kv = await nc.jetstream().views.kv('settings');
      await kv.put('mode', 'green');
    });
    await server.kill();
    await server.start();
    const value = await withConnection(server, async (nc) => (await (await nc.jetstream().views.kv('settings')).get('mode'))?.string());
    expect(value).toBe('green');
  });
});

describe('startNats options', () => {
  it('listens on a requested port, without JetStream when asked, and deletes its files on destroy()', async () => {
    const port = await freePort();
    const server = await startNats({ port, jetstream: false });
    try {
      expect(server.port).toBe(port);
      expect(server.jetstream).toBe(false);
      await withConnection(server, async (nc) => {
        await expect(nc.jetstreamManager()).rejects.toThrow();
      });
    } finally {
      await server.destroy();
    }
    expect(existsSync(server.dataDir)).toBe(false);
  });

  it('fails with DBP_ERR_TESTING_PORT_IN_USE when the requested port is taken', async () => {
    const first = await startNats({ jetstream: false });
    try {
      await expect(startNats({ port: first.port, jetstream: false })).rejects.toMatchObject({ code: 'DBP_ERR_TESTING_PORT_IN_USE' });
    } finally {
      await first.destroy();
    }
  });
});
