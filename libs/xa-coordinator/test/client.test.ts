// XaClient's contract when no coordinator answers: an error, never an OK.
import { createBus } from '@dbproxy/bus';
import { XaClient } from '../src';

describe('XaClient', () => {
  it('rejects with DBP_ERR_BUS_NO_RESPONDERS when no coordinator serves dbproxy.xa.execute', async () => {
    const bus = createBus({ name: 'xa-client-test' });
    try {
      const client = new XaClient(bus, { requestedBy: 'edge', commitAllowanceMs: 100 });
      await expect(client.execute({ statement: 'INSERT INTO t VALUES (1)', participants: [{ shard: 's1', backend: 'p1' }], deadlineMs: 200 })).rejects.toMatchObject({
        code: 'DBP_ERR_BUS_NO_RESPONDERS',
      });
    } finally {
      await bus.close();
    }
  });
});
