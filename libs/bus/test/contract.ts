// The bus contract: one suite, run against the embedded bus and against NATS, so both behave
// the same for publish/subscribe, wildcards, request/reply, KV and trace context.
import { randomUUID } from 'node:crypto';
import type { Bus } from '../src/index';
import { messagingContract } from './contract-messaging';
import { stateContract } from './contract-state';
import type { ContractContext, MakeBus } from './contract-support';
import { installTracePropagation } from './trace-setup';

export { eventually, type MakeBus } from './contract-support';

export function runBusContract(name: string, makeBus: MakeBus): void {
  describe(`bus contract: ${name}`, () => {
    const opened: Bus[] = [];
    let prefix = '';
    const ctx: ContractContext = {
      makeBus,
      open: async (label) => {
        const bus = await makeBus(label);
        opened.push(bus);
        return bus;
      },
      get prefix() {
        return prefix;
      },
    };

    beforeAll(() => installTracePropagation());
    beforeEach(() => {
      prefix = `t${randomUUID().replace(/-/g, '')}`;
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((b) => b.close()));
    });

    messagingContract(ctx);
    stateContract(ctx);
  });
}
