// Runs the bus contract on NATS with JetStream KV, against a nats-server started for this file.
import { createBus } from '../src/index';
import { runBusContract } from './contract';
import { startNatsServer, type NatsServerHandle } from './nats-server';

jest.setTimeout(20_000);

describe('NATS bus', () => {
  let server: NatsServerHandle;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server.destroy();
  });

  runBusContract('nats', async (name) => {
    const bus = createBus({ name, natsUrl: server.url });
    await bus.waitForConnection(5000);
    return bus;
  });
});
