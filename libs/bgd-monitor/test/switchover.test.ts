// Spec 001 scenarios on real servers over real NATS: startup, discovery, writer and reader
// switchover, late entry, first observation at completion, probe destination.
import { A, backendsA, configToml, deploy, startEstate, type Deployed, type Estate } from './harness';

jest.setTimeout(120_000);

let estate: Estate;
let d: Deployed | undefined;

beforeAll(async () => {
  estate = await startEstate();
});
afterEach(async () => {
  await d?.stop();
  d = undefined;
});
afterAll(async () => {
  await estate?.stop();
});

const automatic = (readers = [A.blueReader]) => ({ name: 'orders', blue_writer: 'orders-blue', blue_readers: readers.map((h) => (h === A.blueReader ? 'orders-blue-r1' : 'orders-blue-r2')) });

describe('automatic mode (green discovered from mysql.rds_topology)', () => {
  it('discovers the green writer, pins and drains during post-processing, completes, cleans up on drain', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim), [automatic()]));
    await d.waitForPhase('orders', 'AVAILABLE');
    const available = await d.deployment('orders');
    expect(available).toMatchObject({ interval_ms: 250, mode: 'automatic' });
    expect(available['mapping']).toEqual([expect.objectContaining({ kind: 'writer', blue: 'orders-blue', greenHost: A.green, green: null, greenIp: sim.endpoint(A.green).ip, pinned: false })]);
    // the green writer exists only at run time: topology knows nothing of it
    expect((await d.topology()).backends.map((b) => b.name).sort()).toEqual(['orders-blue', 'orders-blue-r1']);
    // polls go to the green IP on the blue port once resolved
    expect(available['probe']).toEqual({ host: sim.endpoint(A.green).ip, port: sim.port, tls: false, direct: true, failures: 0 });

    await sim.status(A.blue, A.green, 'SWITCHOVER_INITIATED');
    await d.waitForPhase('orders', 'WRITER_SWITCHOVER_INITIATED');
    expect((await d.deployment('orders'))['interval_ms']).toBe(100);
    await d.waitForTopology((t) => (t.readOnlySuppression['orders'] ?? []).length === 2, 'read-only suppression of the deployment endpoints');
    await sim.status(A.blue, A.green, 'SWITCHOVER_IN_PROGRESS');
    await d.waitForPhase('orders', 'WRITER_SWITCHOVER_IN_PROGRESS');
    await sim.status(A.blue, A.green, 'SWITCHOVER_IN_POST_PROCESSING');
    await d.waitForPhase('orders', 'WRITER_SWITCHOVER_POST_PROCESSING');
    const greenIp = sim.endpoint(A.green).ip;
    const pinned = await d.waitForTopology((t) => t.overlay.dnsPins[A.blue] === greenIp && t.overlay.shunned.includes('orders-blue-r1'), 'writer pinned to green, unmapped reader shunned');
    expect(pinned.backends.find((b) => b.name === 'orders-blue')?.connectAddress).toBe(`${greenIp}:${sim.port}`);
    // the only blue reader is shunned: the writer is lent to the readers
    expect(pinned.overlay.writersServingReads).toEqual(['orders-blue']);
    expect(d.actions.filter((a) => a.action === 'drain-backend').map((a) => a.action === 'drain-backend' && a.backend)).toEqual(['orders-blue']);

    await sim.completed(A.green);
    await d.waitForPhase('orders', 'READER_SWITCHOVER_IN_PROGRESS');
    await d.waitForTopology((t) => t.overlay.dnsPins[A.blue] === undefined && Object.keys(t.readOnlySuppression).length === 0, 'writer pin removed at writer completion, suppression ended');
    expect((await d.topology()).overlay.shunned).toEqual(['orders-blue-r1']);

    await sim.empty();
    await d.waitForPhase('orders', 'NONE');
    await d.waitForTopology((t) => t.overlay.shunned.length === 0 && t.overlay.writersServingReads.length === 0, 'readers unshunned, writer returned');
    expect(d.phases('orders')).toEqual([
      'AVAILABLE',
      'WRITER_SWITCHOVER_INITIATED',
      'WRITER_SWITCHOVER_IN_PROGRESS',
      'WRITER_SWITCHOVER_POST_PROCESSING',
      'WRITER_SWITCHOVER_COMPLETED',
      'READER_SWITCHOVER_IN_PROGRESS',
      'SWITCHOVER_COMPLETED',
      'NONE',
    ]);
    // successful cleanup does not restore the obsolete blue writer (no move-writer in automatic mode at all)
    expect(d.actions.some((a) => a.action === 'move-writer')).toBe(false);
    expect((await d.deployment('orders'))['interval_ms']).toBe(200);
  });
});
