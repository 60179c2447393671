// Edge connection ids on a real (embedded) bus: processes claim distinct slots by compare-and-set,
// ids stay in the edge range and name their slot, a freed slot can be claimed again.
import { EmbeddedBroker, createBus, type Bus } from '@dbproxy/bus';
import { createLogger } from '@dbproxy/observability';
import { EDGE_ID_BASE, EdgeIds, ID_SLOTS, slotOfId } from './edge-ids';

const logger = createLogger({ level: 'silent', service: 'test', instance: 'test' });

describe('EdgeIds', () => {
  let bus: Bus;
  beforeEach(() => {
    bus = createBus({ name: 'edge-ids', embedded: new EmbeddedBroker() });
  });
  afterEach(() => bus.close());

  it('gives each process its own slot and ids in the edge range naming it', async () => {
    const processes = Array.from({ length: 40 }, () => new EdgeIds<string>(logger));
    for (const ids of processes) await ids.claim(bus);
    expect(new Set(processes.map((p) => p.slot)).size).toBe(40);
    const first = processes[0] as EdgeIds<string>;
    const a = first.allocate('a');
    const b = first.allocate('b');
    expect(a).not.toBe(b);
    for (const id of [a, b]) {
      expect(id).toBeGreaterThanOrEqual(EDGE_ID_BASE);
      expect(id).toBeLessThan(2 ** 31);
      expect(slotOfId(id)).toBe(first.slot);
    }
    expect(first.owner(a)).toBe('a');
    first.release(a);
    expect(first.owner(a)).toBeUndefined();
    expect(slotOfId(12345)).toBe(-1);
    for (const ids of processes) await ids.close();
  });

  it('frees the slot on close', async () => {
    const ids = new EdgeIds<string>(logger);
    await ids.claim(bus);
    const kv = await bus.kv('dbproxy_mysqledge_ids');
    expect(await kv.keys()).toEqual([`slot.${ids.slot}`]);
    await ids.close();
    expect(await kv.keys()).toEqual([]);
    expect(ID_SLOTS).toBe(1024);
  });
});
