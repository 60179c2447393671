// Sender identity on both buses: the embedded one and a real nats-server (JetStream for the KV).
import { startNats, type NatsServer } from '@dbproxy/testing';
import { createBus, EmbeddedBroker, publishMessage, rejectedMessageCounts, Subjects, subscribeMessages } from '../src/index';
import { runIdentityContract } from './identity-contract';

jest.setTimeout(30_000);

describe('embedded bus', () => {
  const broker = new EmbeddedBroker();
  runIdentityContract('embedded', async (name) => createBus({ name, embedded: broker }));

  it('signs and verifies automatically when no identities are set: typed messages pass, a raw unsigned one is refused', async () => {
    const [a, b] = [createBus({ name: 'auto-a', embedded: broker }), createBus({ name: 'auto-b', embedded: broker })];
    const got: string[] = [];
    await subscribeMessages(b, Subjects.bgdActions.pattern(), (m) => void got.push(m.actionId)).ready;
    const before = rejectedMessageCounts()['bgd_action/unsigned'] ?? 0;
    publishMessage(a, Subjects.bgdActions, {}, { deployment: 'd', actionId: 'typed', issuedAt: new Date().toISOString(), reason: 'r', action: 'unshun', backend: 'db1' });
    a.publish('dbproxy.bgd.actions', new TextEncoder().encode(JSON.stringify({ v: 1, deployment: 'd', actionId: 'raw', issuedAt: new Date().toISOString(), reason: 'r', action: 'unshun', backend: 'db1' })));
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(['typed']);
    expect(rejectedMessageCounts()['bgd_action/unsigned']).toBe(before + 1);
    await Promise.all([a.close(), b.close()]);
  });
});

describe('NATS bus', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await server?.destroy();
  });

  runIdentityContract('nats', async (name) => {
    const bus = createBus({ name, natsUrl: server.url });
    await bus.waitForConnection(5000);
    return bus;
  });
});
