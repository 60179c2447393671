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
    await d.waitForTopology((t) => (t.read_only_suppression['orders'] ?? []).some((k) => k.startsWith(A.blueReader.toLowerCase())), 'reader r1 suppressed');
    // the reader hostgroup changes while suppression is active: suppression moves to the new reader
    await d.reconfigure(toml(bothReaders(), [orders({ blue_readers: ['orders-blue-r2'] })]));
    await d.waitForTopology((t) => {
      const keys = t.read_only_suppression['orders'] ?? [];
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
    await d.waitForTopology((t) => t.backends.find((b) => b.name === 'orders-blue')?.role === 'primary' && Object.keys(t.read_only_suppression).length === 0, 'blue writer restored, suppression cleared');
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
    await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] !== undefined && t.overlay.shunned.length === 1, 'pinned and shunned');
    await d.reconfigure(toml(backends, []));
    await d.waitForTopology((t) => Object.keys(t.overlay.dns_pins).length === 0 && t.overlay.shunned.length === 0 && t.overlay.writers_serving_reads.length === 0, 'all undone');
    expect((await d.bgd()).deployments).toEqual([]);
  });
});

describe('reader policy', () => {
  it('writer_is_also_reader: the writer is not lent when every blue reader is shunned', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml(backendsA(estate.simA), [orders({ writer_is_also_reader: true })]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_IN_POST_PROCESSING');
    await d.waitForTopology((t) => t.overlay.shunned.includes('orders-blue-r1'), 'shunned');
    expect((await d.topology()).overlay.writers_serving_reads).toEqual([]);
  });

  it('with a reader left unshunned (mapped in explicit mode) the writer is not lent', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    const backends = [...backendsA(estate.simA, { explicit: true, readers: [A.blueReader, A.blueReader2] })];
    d = await deploy(estate.nats.url, toml(backends, [ordersExplicit({ blue_readers: ['orders-blue-r1', 'orders-blue-r2'] })]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_IN_POST_PROCESSING');
    const t = await d.waitForTopology((v) => v.overlay.shunned.includes('orders-blue-r2'), 'unmapped r2 shunned');
    expect(t.overlay.shunned).toEqual(['orders-blue-r2']);
    expect(t.overlay.dns_pins[A.blueReader]).toBe(estate.simA.endpoint(A.greenReader).ip);
    expect(t.overlay.writers_serving_reads).toEqual([]);
  });
});

describe('offline server exclusions (spec 001: OFFLINE_SOFT and OFFLINE_HARD are neither mapped nor drained)', () => {
  const withStatus = (lines: BackendLine[], name: string, status: string): BackendLine[] => lines.map((b) => (b.name === name ? { ...b, extra: `${b.extra ?? ''}\nstatus = "${status}"` } : b));

  it.each(['offline_soft', 'offline_hard'])('a blue reader %s is not shunned nor unshunned; the writer is lent once the eligible readers are shunned', async (status) => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml(withStatus(bothReaders(), 'orders-blue-r2', status), [orders({ blue_readers: ['orders-blue-r1', 'orders-blue-r2'] })]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    const t = await d.waitForTopology((v) => v.overlay.shunned.includes('orders-blue-r1') && v.overlay.writers_serving_reads.length === 1, 'eligible reader shunned, writer lent');
    expect(t.overlay.shunned).toEqual(['orders-blue-r1']);
    expect(t.overlay.writers_serving_reads).toEqual(['orders-blue']);
    await estate.simA.completed(A.green);
    await d.waitForPhase('orders', 'READER_SWITCHOVER_IN_PROGRESS');
    await estate.simA.empty();
    await d.waitForPhase('orders', 'NONE');
    await d.waitForTopology((v) => v.overlay.shunned.length === 0 && v.overlay.writers_serving_reads.length === 0, 'cleaned up');
    const about = (b: string) => d!.actions.filter((a) => 'backend' in a && a.backend === b).map((a) => a.action);
    expect(about('orders-blue-r2')).toEqual([]);
    expect(about('orders-blue-r1')).toEqual(['shun', 'unshun']);
  });

  it('an offline_hard green reader is not mapped (its blue reader is shunned, not pinned) and not drained at success', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml(withStatus(backendsA(estate.simA, { explicit: true }), 'orders-green-r1', 'offline_hard'), [ordersExplicit()]));
    await d.waitForPhase('orders', 'AVAILABLE');
    expect(((await d.deployment('orders'))['mapping'] as { kind: string }[]).map((p) => p.kind)).toEqual(['writer']);
    await drive(d, estate.simA, A, 'orders', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    const t = await d.waitForTopology((v) => v.overlay.dns_pins[A.blue] !== undefined && v.overlay.shunned.includes('orders-blue-r1'), 'writer pinned, unmapped reader shunned');
    expect(t.overlay.dns_pins).toEqual({ [A.blue]: estate.simA.endpoint(A.green).ip });
    await estate.simA.completed(A.green);
    await d.waitForPhase('orders', 'READER_SWITCHOVER_IN_PROGRESS');
    await estate.simA.empty();
    await d.waitForPhase('orders', 'NONE');
    await d.waitForTopology((v) => v.overlay.shunned.length === 0, 'unshunned');
    // success drains the eligible green servers only; the offline one keeps its row and status
    expect(d.actions.filter((a) => a.action === 'drain-backend').map((a) => (a.action === 'drain-backend' ? a.backend : ''))).toEqual(['orders-blue', 'orders-green']);
    const green = (await d.topology()).backends.find((b) => b.name === 'orders-green-r1');
    expect(green).toMatchObject({ shard: 'green', role: 'replica' });
  });

  it('an offline_soft explicit green writer is not selected: no demotion, no pin, no drain of the blue writer', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml(withStatus(backendsA(estate.simA, { explicit: true }), 'orders-green', 'offline_soft'), [ordersExplicit()]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    expect(await d.deployment('orders')).toMatchObject({ writerProblem: expect.stringContaining('not eligible'), demotedWriter: null });
    // the mapped reader is still pinned; the writer stays blue
    const t = await d.waitForTopology((v) => v.overlay.dns_pins[A.blueReader] !== undefined, 'reader pinned');
    expect(t.overlay.dns_pins[A.blue]).toBeUndefined();
    expect(t.backends.find((b) => b.name === 'orders-blue')).toMatchObject({ role: 'primary', shard: 'default' });
    expect(d.actions.filter((a) => a.action === 'move-writer')).toEqual([]);
    expect(d.actions.filter((a) => a.action === 'drain-backend').map((a) => (a.action === 'drain-backend' ? a.backend : ''))).toEqual(['orders-blue-r1']);
  });

  it('an offline blue writer has no worker; a blue writer going offline in post-processing stops the worker with rollback', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    const backends = backendsA(estate.simA);
    d = await deploy(estate.nats.url, toml(withStatus(backends, 'orders-blue', 'offline_hard'), [orders()]));
    await new Promise((r) => setTimeout(r, 600));
    expect((await d.bgd()).deployments).toEqual([]);
    expect(d.states).toEqual([]);
    await d.reconfigure(toml(backends, [orders()]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    await d.waitForTopology((v) => v.overlay.dns_pins[A.blue] !== undefined && v.overlay.shunned.length === 1, 'pinned and shunned');
    await d.reconfigure(toml(withStatus(backends, 'orders-blue', 'offline_soft'), [orders()]));
    const t = await d.waitForTopology((v) => Object.keys(v.overlay.dns_pins).length === 0 && v.overlay.shunned.length === 0 && v.overlay.writers_serving_reads.length === 0, 'rolled back');
    expect(Object.keys(t.read_only_suppression)).toEqual([]);
    expect((await d.bgd()).deployments).toEqual([]);
    expect(d.phases('orders').slice(-1)).toEqual(['NONE']);
  });
});

describe('worker hostgroup changes', () => {
  it('the green writer replaced during IN_PROGRESS: the old one is restored and the new one takes the writer role, phase kept', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    const backends: BackendLine[] = [...backendsA(estate.simA, { explicit: true }), { name: 'orders-green-b', address: estate.simA.endpoint(A.green).address, role: 'primary', shard: 'green-b' }];
    d = await deploy(estate.nats.url, toml(backends, [ordersExplicit()]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS');
    await d.waitForTopology((t) => t.backends.find((b) => b.name === 'orders-green')?.shard === 'default', 'first green writer moved in');
    await d.reconfigure(toml(backends, [ordersExplicit({ green_writer: 'orders-green-b' })]));
    const t = await d.waitForTopology((v) => {
      const at = (n: string) => v.backends.find((b) => b.name === n);
      return at('orders-green-b')?.shard === 'default' && at('orders-green-b')?.role === 'primary' && at('orders-green')?.shard === 'green';
    }, 'replaced writer restored, new green writer moved in');
    expect(t.backends.find((b) => b.name === 'orders-blue')?.role).toBe('replica');
    const moves = d.actions.filter((a) => a.action === 'move-writer').map((a) => (a.action === 'move-writer' ? `${a.from}>${a.to}` : ''));
    expect(moves).toEqual(['orders-blue>orders-green', 'orders-green>orders-blue', 'orders-blue>orders-green-b']);
    expect(await d.deployment('orders')).toMatchObject({ phase: 'WRITER_SWITCHOVER_IN_PROGRESS', demotedWriter: { from: 'orders-blue', to: 'orders-green-b' } });
    await drive(d, estate.simA, A, 'orders', 'SWITCHOVER_IN_POST_PROCESSING');
    await d.waitForTopology((v) => v.overlay.dns_pins[A.blue] === estate.simA.endpoint(A.green).ip, 'writer pinned to green');
    expect(d.phases('orders')).toEqual(['AVAILABLE', 'WRITER_SWITCHOVER_INITIATED', 'WRITER_SWITCHOVER_IN_PROGRESS', 'WRITER_SWITCHOVER_POST_PROCESSING']);
  });
});

describe('concurrent deployments', () => {
  it('keep their state, pins and suppression keys apart', async () => {
    await estate.simA.status(A.blue, A.green, 'AVAILABLE');
    await estate.simB.status(B.blue, B.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, toml([...backendsA(estate.simA), ...billingBackends(estate.simB)], [orders(), billing]));
    await drive(d, estate.simA, A, 'orders', 'AVAILABLE', 'SWITCHOVER_INITIATED', 'SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_IN_POST_PROCESSING');
    await drive(d, estate.simB, B, 'billing', 'AVAILABLE', 'SWITCHOVER_INITIATED');
    await d.waitForTopology((t) => t.read_only_suppression['billing'] !== undefined && t.read_only_suppression['orders'] !== undefined, 'both suppressed');
    expect((await d.deployment('billing'))['mapping']).toEqual([expect.objectContaining({ greenHost: B.green, greenIp: estate.simB.endpoint(B.green).ip })]);
    // billing is cancelled: orders keeps its pin, shun and suppression
    await drive(d, estate.simB, B, 'billing', 'AVAILABLE');
    const t = await d.waitForTopology((v) => v.read_only_suppression['billing'] === undefined, 'billing suppression cleared');
    expect(t.read_only_suppression['orders']).toHaveLength(2);
    expect(t.overlay.dns_pins).toEqual({ [A.blue]: estate.simA.endpoint(A.green).ip });
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
