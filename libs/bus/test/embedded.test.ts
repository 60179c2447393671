// Runs the bus contract on the embedded in-process bus, plus what only the embedded bus does.
import { createBus, droppedMessageCounts, EmbeddedBroker, sharedEmbeddedBroker } from '../src/index';
import { runBusContract } from './contract';

describe('embedded bus', () => {
  let broker = new EmbeddedBroker();
  beforeEach(() => {
    broker = new EmbeddedBroker();
  });

  runBusContract('embedded', async (name) => createBus({ name, embedded: broker }));

  it('shares the process-wide broker between buses created without a URL', async () => {
    const [a, b] = [createBus({ name: 'a' }), createBus({ name: 'b' })];
    const got: string[] = [];
    await b.subscribe('shared.test', (m) => void got.push(new TextDecoder().decode(m.data))).ready;
    a.publish('shared.test', new TextEncoder().encode('hello'));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['hello']);
    expect(sharedEmbeddedBroker()).toBe(sharedEmbeddedBroker());
    await a.close();
    // Closing one service's bus leaves the others working.
    a.publish('shared.test', new TextEncoder().encode('dropped'));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['hello']);
    expect(b.status()).toBe('connected');
    await b.close();
  });

  it('bounds the messages waiting for one subscription and reports the overflow as slow-consumer', async () => {
    const small = new EmbeddedBroker({ maxPendingPerSubscription: 3 });
    const bus = createBus({ name: 'bounded', embedded: small });
    const got: number[] = [];
    await bus.subscribe('bounded.x', (m) => void got.push(m.data[0] ?? -1)).ready;
    const before = droppedMessageCounts()['slow-consumer'];
    // Published in one turn of the event loop: nothing is delivered before the queue fills.
    for (let i = 0; i < 10; i++) bus.publish('bounded.x', new Uint8Array([i]));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual([0, 1, 2]);
    expect(droppedMessageCounts()['slow-consumer']).toBe(before + 7);
    await bus.close();
  });
});
