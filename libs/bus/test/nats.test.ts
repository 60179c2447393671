// Runs the bus contract on NATS with JetStream KV, against a nats-server started for this file.
import { startNats, type NatsServer } from '@dbproxy/testing';
import { createBus } from '../src/index';
import { runBusContract } from './contract';

jest.setTimeout(20_000);

describe('NATS bus', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await server?.destroy();
  });

  runBusContract('nats', async (name) => {
    const bus = createBus({ name, natsUrl: server.url });
    await bus.waitForConnection(5000);
    return bus;
  });
});
