// Spec 001 configuration and worker lifetime on real servers over real NATS: in-place refresh
// (before and after post-processing), reader hostgroup change under suppression, disable and
// re-enable, removal, reader policy, and two concurrent deployments kept apart.
import type { BgdPhase } from '@dbproxy/bus';
import type { RdsBgdSimulation } from '@dbproxy/testing';
import { A, B, backendsA, configToml, deploy, startEstate, type BackendLine, type Deployed, type DeploymentLines, type Estate } from './harness';

jest.setTimeout(120_000);

let estate: Estate;
let d: Deployed | undefined;

beforeAll(async () => {
  estate = await startEstate();
});
beforeEach(async () => {
  await Promise.all([estate.simA.createTable(), estate.simB.createTable()]);
});
afterEach(async () => {
  await d?.stop();
  d = undefined;
});
afterAll(async () => {
  await estate?.stop();
});

const orders = (extra: Partial<DeploymentLines> = {}): DeploymentLines => ({ name: 'orders', blue_writer: 'orders-blue', blue_readers: ['orders-blue-r1'], ...extra });
const ordersExplicit = (extra: Partial<DeploymentLines> = {}): DeploymentLines => orders({ green_writer: 'orders-green', green_readers: ['orders-green-r1'], ...extra });
const billing: DeploymentLines = { name: 'billing', blue_writer: 'billing-blue' };
const billingBackends = (sim: RdsBgdSimulation): BackendLine[] => [{ name: 'billing-blue', address: sim.endpoint(B.blue).address, role: 'primary', shard: 'billing' }];
const bothReaders = () => backendsA(estate.simA, { readers: [A.blueReader, A.blueReader2] });

const STATUS: Record<string, BgdPhase> = {
  AVAILABLE: 'AVAILABLE',
  SWITCHOVER_INITIATED: 'WRITER_SWITCHOVER_INITIATED',
  SWITCHOVER_IN_PROGRESS: 'WRITER_SWITCHOVER_IN_PROGRESS',
  SWITCHOVER_IN_POST_PROCESSING: 'WRITER_SWITCHOVER_POST_PROCESSING',
};

async function drive(dep: Deployed, sim: RdsBgdSimulation, names: { blue: string; green: string }, deployment: string, ...statuses: string[]): Promise<void> {
  for (const status of statuses) {
    await sim.status(names.blue, names.green, status);
    await dep.waitForPhase(deployment, STATUS[status] as BgdPhase);
  }
}
const hostsAll = () => ({ ...estate.simA.hosts(), ...estate.simB.hosts() });
const toml = (backends: BackendLine[], deployments: DeploymentLines[]) => configToml(estate.nats.url, hostsAll(), backends, deployments);

describe('in-place refresh', () => {
  it('before post-processing keeps the phase and rebuilds the map from the new configuration', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml(bothReaders(), [orders()]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED');
    const before = await d.deployment('orders');
    await d.waitForTopology((t) => (t.readOnlySuppression['orders'] ?? []).some((k) => k.startsWith(A.blueReader.toLowerCase())), 'reader r1 suppressed');
    // the reader hostgroup changes while suppression is active: suppression moves to the new reader
    await d.reconfigure(toml(bothReaders(), [orders({ blue_readers: ['orders-blue-r2'] })]));
    await d.waitForTopology((t) => {
      const keys = t.readOnlySuppression['orders'] ?? [];
      return keys.some((k) => k.startsWith(A.blueReader2.toLowerCase())) && !keys.some((k) => k.startsWith(A.blueReader.toLowerCase()));
    }, 'suppression moved from r1 to r2');
    await waitForChecksumChange(d, 'orders', before['checksum']);
    expect((await d.deployment('orders'))['phase']).toBe('WRITER_SWITCHOVER_INITIATED');
    await drive(d, estate.simA, A, 'orders', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    // the rebuilt map shuns the new reader set
    await d.waitForTopology((t) => t.overlay.shunned.includes('orders-blue-r2') && !t.overlay.shunned.includes('orders-blue-r1'), 'r2 shunned, r1 not');
    expect(d.phases('orders')).toEqual(['AVAILABLE', 'WRITER_SWITCHOVER_INITIATED', 'WRITER_SWITCHOVER_IN_PROGRESS', 'WRITER_SWITCHOVER_POST_PROCESSING']);
  });

  it('at post-processing rolls back once, applies the configuration and restarts the state machine from NONE in the same worker', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml(bothReaders(), [orders()]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    await d.waitForTopology((t) => t.overlay.shunned.includes('orders-blue-r1'), 'r1 shunned');
    await d.reconfigure(toml(bothReaders(), [orders({ blue_readers: ['orders-blue-r2'] })]));
    await d.waitForTopology((t) => t.overlay.shunned.includes('orders-blue-r2') && !t.overlay.shunned.includes('orders-blue-r1'), 'rolled back (r1 unshunned) and set up again (r2 shunned)');
    await d.waitForPhase('orders', 'WRITER_SWITCHOVER_POST_PROCESSING');
    expect(d.phases('orders')).toEqual(['AVAILABLE', 'WRITER_SWITCHOVER_INITIATED', 'WRITER_SWITCHOVER_IN_PROGRESS', 'WRITER_SWITCHOVER_POST_PROCESSING', 'NONE', 'WRITER_SWITCHOVER_POST_PROCESSING']);
    expect(d.actions.filter((a) => a.action === 'unshun').map((a) => (a.action === 'unshun' ? a.backend : ''))).toEqual(['orders-blue-r1']);
  });
});

describe('worker stop and recreation', () => {
  it('disabling in progress rolls back (blue writer restored); re-enabling starts a fresh worker', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    const backends = backendsA(estate.simA, { explicit: true });
    d = await deploy(estate.nats.url, toml(backends, [ordersExplicit()]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS');
    await d.waitForTopology((t) => t.backends.find((b) => b.name === 'orders-green')?.shard === 'default', 'green writer moved in');
    await d.reconfigure(toml(backends, [ordersExplicit({ enabled: false })]));
    await d.waitForTopology((t) => t.backends.find((b) => b.name === 'orders-blue')?.role === 'primary' && Object.keys(t.readOnlySuppression).length === 0, 'blue writer restored, suppression cleared');
    expect((await d.bgd()).deployments).toEqual([]);
    expect(d.phases('orders').slice(-1)).toEqual(['NONE']);
    await d.reconfigure(toml(backends, [ordersExplicit()]));
    await d.waitForPhase('orders', 'WRITER_SWITCHOVER_IN_PROGRESS');
    // the fresh worker entered from NONE and did its own setup (a second demotion)
    expect(d.actions.filter((a) => a.action === 'move-writer')).toHaveLength(3);
  });

  it('removing the deployment in post-processing rolls back its pins and shuns', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    const backends = backendsA(estate.simA);
    d = await deploy(estate.nats.url, toml(backends, [orders()]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    await d.waitForTopology((t) => t.overlay.dnsPins[A.blue] !== undefined && t.overlay.shunned.length === 1, 'pinned and shunned');
    await d.reconfigure(toml(backends, []));
    await d.waitForTopology((t) => Object.keys(t.overlay.dnsPins).length === 0 && t.overlay.shunned.length === 0 && t.overlay.writersServingReads.length === 0, 'all undone');
    expect((await d.bgd()).deployments).toEqual([]);
  });
});

describe('reader policy', () => {
  it('writer_is_also_reader: the writer is not lent when every blue reader is shunned', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml(backendsA(estate.simA), [orders({ writer_is_also_reader: true })]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_IN_POST_PROCESSING');
    await d.waitForTopology((t) => t.overlay.shunned.includes('orders-blue-r1'), 'shunned');
    expect((await d.topology()).overlay.writersServingReads).toEqual([]);
  });

  it('with a reader left unshunned (mapped in explicit mode) the writer is not lent', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    const backends = [...backendsA(estate.simA, { explicit: true, readers: [A.blueReader, A.blueReader2] })];
    d = await deploy(estate.nats.url, toml(backends, [ordersExplicit({ blue_readers: ['orders-blue-r1', 'orders-blue-r2'] })]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_IN_POST_PROCESSING');
    const t = await d.waitForTopology((v) => v.overlay.shunned.includes('orders-blue-r2'), 'unmapped r2 shunned');
    expect(t.overlay.shunned).toEqual(['orders-blue-r2']);
    expect(t.overlay.dnsPins[A.blueReader]).toBe(estate.simA.endpoint(A.greenReader).ip);
    expect(t.overlay.writersServingReads).toEqual([]);
  });
});

describe('concurrent deployments', () => {
  it('keep their state, pins and suppression keys apart', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    await estate.simB.status(B.blue, B.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml([...backendsA(estate.simA), ...billingBackends(estate.simB)], [orders(), billing]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    await drive(d, estate.simB, B, 'billing', 'AVAILABLE', 'SWITCHOVER_INITIATED');
    await d.waitForTopology((t) => t.readOnlySuppression['billing'] !== undefined && t.readOnlySuppression['orders'] !== undefined, 'both suppressed');
    expect((await d.deployment('billing'))['mapping']).toEqual([expect.objectContaining({ greenHost: B.green, greenIp: estate.simB.endpoint(B.green).ip })]);
    // billing is cancelled: orders keeps its pin, shun and suppression
    await drive(d, estate.simB, B, 'billing', 'AVAILABLE');
    const t = await d.waitForTopology((v) => v.readOnlySuppression['billing'] === undefined, 'billing suppression cleared');
    expect(t.readOnlySuppression['orders']).toHaveLength(2);
    expect(t.overlay.dnsPins).toEqual({ [A.blue]: estate.simA.endpoint(A.green).ip });
    expect(t.overlay.shunned).toEqual(['orders-blue-r1']);
    expect((await d.deployment('orders'))['phase']).toBe('WRITER_SWITCHOVER_POST_PROCESSING');
    expect(d.actions.filter((a) => a.deployment === 'billing').map((a) => a.action)).toEqual([]);
  });
});

async function waitForChecksumChange(dep: Deployed, name: string, before: unknown): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if ((await dep.deployment(name))['checksum'] !== before) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('checksum did not change');
}
