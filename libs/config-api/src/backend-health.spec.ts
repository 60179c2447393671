// BackendHealthBoard on the embedded bus: GET /v1/backends rows carry the last check's replication position.
import { createBus, EmbeddedBroker, publishMessage, Subjects, type Bus } from '@dbproxy/bus';
import { configSchema } from '@dbproxy/config';
import { waitFor } from '@dbproxy/testing';
import { BackendHealthBoard } from './backend-health';

describe('BackendHealthBoard', () => {
  let bus: Bus;
  afterEach(() => bus?.close());

  it('shows the position of the last fresh report (GTID set of a MariaDB replica), null without one', async () => {
    bus = createBus({ name: 'backend-health-spec', embedded: new EmbeddedBroker() });
    const board = new BackendHealthBoard(() => 60_000);
    const subscription = board.start(bus);
    await subscription.ready;
    const config = configSchema.parse({
      mysql_backends: [
        { name: 'db1', address: 'h:1', role: 'primary' },
        { name: 'db2', address: 'h:2', role: 'replica' },
      ],
    });
    const report = { protocol: 'mysql' as const, backend: 'db2', up: true, latencyMs: 1, lagSeconds: 0, position: '0-1-42,1-2-7', roleObserved: 'replica' as const, checkedAt: new Date().toISOString() };
    publishMessage(bus, Subjects.health, { protocol: 'mysql', backend: 'db2' }, report);
    await waitFor(() => board.view(config).find((b) => b.name === 'db2')?.health === 'up');
    const rows = board.view(config);
    expect(rows.find((b) => b.name === 'db2')).toMatchObject({ health: 'up', position: '0-1-42,1-2-7' });
    expect(rows.find((b) => b.name === 'db1')).toMatchObject({ health: 'unknown', position: null });
    expect(board.view(config, Date.now() + 120_000).find((b) => b.name === 'db2')?.position).toBeNull(); // stale
  });
});
