// Spec 001 scenarios on real servers over real NATS: startup, discovery, writer and reader
// switchover, late entry, first observation at completion, probe destination.
import type { BgdPhase } from '@dbproxy/bus';
import { mysqlEdgeService } from '@dbproxy/mysql-edge';
import { metricValue } from '@dbproxy/runtime/testing';
import { freePort, waitFor, type RdsBgdSimulation } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { bgdMonitorService } from '../src';
import { A, backendsA, configToml, deploy, startEstate, type Deployed, type DeploymentLines, type Estate, type TopologyView } from './harness';

jest.setTimeout(120_000);

let estate: Estate;
let d: Deployed | undefined;

beforeAll(async () => {
  estate = await startEstate();
});
beforeEach(async () => {
  await estate.simA.createTable();
  await estate.simA.reachable(A.green, true);
});
afterEach(async () => {
  await d?.stop();
  d = undefined;
});
afterAll(async () => {
  await estate?.stop();
});

const explicit = (extra: Partial<DeploymentLines> = {}): DeploymentLines => ({ name: 'orders', blue_writer: 'orders-blue', blue_readers: ['orders-blue-r1'], green_writer: 'orders-green', green_readers: ['orders-green-r1'], ...extra });

/** Sets each status in turn and waits for the phase it converts to. */
async function drive(dep: Deployed, sim: RdsBgdSimulation, ...steps: [string, BgdPhase][]): Promise<void> {
  for (const [status, phase] of steps) {
    await sim.status(A.blue, A.green, status);
    await dep.waitForPhase('orders', phase);
  }
}
const INITIATED: [string, BgdPhase] = ['SWITCHOVER_INITIATED', 'WRITER_SWITCHOVER_INITIATED'];
const IN_PROGRESS: [string, BgdPhase] = ['SWITCHOVER_IN_PROGRESS', 'WRITER_SWITCHOVER_IN_PROGRESS'];
const POST: [string, BgdPhase] = ['SWITCHOVER_IN_POST_PROCESSING', 'WRITER_SWITCHOVER_POST_PROCESSING'];
const AVAILABLE: [string, BgdPhase] = ['AVAILABLE', 'AVAILABLE'];
const shardOf = (t: TopologyView, name: string) => t.backends.find((b) => b.name === name);

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
    await d.waitForTopology((t) => (t.read_only_suppression['orders'] ?? []).length === 2, 'read-only suppression of the deployment endpoints');
    await sim.status(A.blue, A.green, 'SWITCHOVER_IN_PROGRESS');
    await d.waitForPhase('orders', 'WRITER_SWITCHOVER_IN_PROGRESS');
    await sim.status(A.blue, A.green, 'SWITCHOVER_IN_POST_PROCESSING');
    await d.waitForPhase('orders', 'WRITER_SWITCHOVER_POST_PROCESSING');
    const greenIp = sim.endpoint(A.green).ip;
    const pinned = await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] === greenIp && t.overlay.shunned.includes('orders-blue-r1'), 'writer pinned to green, unmapped reader shunned');
    expect(pinned.backends.find((b) => b.name === 'orders-blue')?.connect_address).toBe(`${greenIp}:${sim.port}`);
    // the only blue reader is shunned: the writer is lent to the readers
    expect(pinned.overlay.writers_serving_reads).toEqual(['orders-blue']);
    expect(d.actions.filter((a) => a.action === 'drain-backend').map((a) => a.action === 'drain-backend' && a.backend)).toEqual(['orders-blue']);

    await sim.completed(A.green);
    await d.waitForPhase('orders', 'READER_SWITCHOVER_IN_PROGRESS');
    await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] === undefined && Object.keys(t.read_only_suppression).length === 0, 'writer pin removed at writer completion, suppression ended');
    expect((await d.topology()).overlay.shunned).toEqual(['orders-blue-r1']);

    await sim.empty();
    await d.waitForPhase('orders', 'NONE');
    await d.waitForTopology((t) => t.overlay.shunned.length === 0 && t.overlay.writers_serving_reads.length === 0, 'readers unshunned, writer returned');
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

  it('falls back to polling through the blue writer after three failed direct polls, removing the pins', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim), [automatic()]));
    await drive(d, sim, AVAILABLE, INITIATED, IN_PROGRESS, POST);
    await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] === sim.endpoint(A.green).ip, 'writer pinned');
    await sim.reachable(A.green, false);
    await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] === undefined, 'pin removed after three failed direct polls');
    expect((await d.deployment('orders'))['phase']).toBe('WRITER_SWITCHOVER_POST_PROCESSING');
    expect(d.actions.find((a) => a.action === 'unpin-dns')).toMatchObject({ hostname: A.blue, reason: 'direct green polls failed' });
    // the green name still resolves here, so the pair is retried (spec: unresolved pairs stay eligible)
  });

  it('enters late (first observation in post-processing): builds the map and does post-processing setup directly', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'SWITCHOVER_IN_POST_PROCESSING');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim), [automatic()]));
    await d.waitForPhase('orders', 'WRITER_SWITCHOVER_POST_PROCESSING');
    await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] === sim.endpoint(A.green).ip && t.overlay.shunned.includes('orders-blue-r1'), 'pinned and shunned on late entry');
    expect(d.phases('orders')).toEqual(['WRITER_SWITCHOVER_POST_PROCESSING']);
  });

  it('first observation at completion: READER_SWITCHOVER_IN_PROGRESS without a map, then successful cleanup on drain', async () => {
    const sim = estate.simA;
    await sim.completed(A.green);
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim), [automatic()]));
    await d.waitForPhase('orders', 'READER_SWITCHOVER_IN_PROGRESS');
    expect((await d.deployment('orders'))['mapping']).toEqual([]);
    await sim.empty();
    await d.waitForPhase('orders', 'NONE');
    expect(d.phases('orders')).toEqual(['WRITER_SWITCHOVER_COMPLETED', 'READER_SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_COMPLETED', 'NONE']);
    expect(d.actions.filter((a) => a.action === 'pin-dns' || a.action === 'shun')).toEqual([]);
  });

  it('repeats: a second deployment after a completed one runs through the same worker', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim), [automatic()]));
    for (let round = 0; round < 2; round++) {
      await drive(d, sim, AVAILABLE, INITIATED, IN_PROGRESS, POST);
      await sim.completed(A.green);
      await d.waitForPhase('orders', 'READER_SWITCHOVER_IN_PROGRESS');
      await sim.empty();
      await d.waitForPhase('orders', 'NONE');
    }
    expect(d.phases('orders').filter((p) => p === 'SWITCHOVER_COMPLETED')).toHaveLength(2);
    expect(d.actions.filter((a) => a.action === 'pin-dns')).toHaveLength(2);
    await d.waitForTopology((t) => t.overlay.shunned.length === 0 && Object.keys(t.overlay.dns_pins).length === 0, 'clean after both rounds');
  });
});

describe('explicit mode (green_writer and green_readers configured)', () => {
  it('demotes the blue writer in progress, pins writer and mapped reader, drains the green pools at success without restoring blue', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim, { explicit: true }), [explicit()]));
    await d.waitForPhase('orders', 'AVAILABLE');
    const mapping = (await d.deployment('orders'))['mapping'];
    expect(mapping).toEqual([
      expect.objectContaining({ kind: 'writer', blue: 'orders-blue', green: 'orders-green', greenIp: sim.endpoint(A.green).ip }),
      expect.objectContaining({ kind: 'reader', blue: 'orders-blue-r1', green: 'orders-green-r1', greenIp: sim.endpoint(A.greenReader).ip }),
    ]);
    const checksum = (await d.deployment('orders'))['checksum'];
    await drive(d, sim, INITIATED, IN_PROGRESS);
    const moved = await d.waitForTopology((t) => shardOf(t, 'orders-green')?.role === 'primary' && shardOf(t, 'orders-green')?.shard === 'default', 'green writer is the default shard primary');
    expect(shardOf(moved, 'orders-blue')?.role).toBe('replica');
    await drive(d, sim, POST);
    await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] === sim.endpoint(A.green).ip && t.overlay.dns_pins[A.blueReader] === sim.endpoint(A.greenReader).ip, 'writer and mapped reader pinned');
    // the reader is mapped: nothing shunned, the writer is not lent
    expect((await d.topology()).overlay.shunned).toEqual([]);
    await sim.completed(A.green);
    await d.waitForPhase('orders', 'READER_SWITCHOVER_IN_PROGRESS');
    await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] === undefined && t.overlay.dns_pins[A.blueReader] !== undefined, 'writer pin removed, reader pin kept until drain');
    await sim.empty();
    await d.waitForPhase('orders', 'NONE');
    const done = await d.waitForTopology((t) => Object.keys(t.overlay.dns_pins).length === 0, 'reader pin removed at success');
    // not restored: green stays the writer; green pools drained
    expect(shardOf(done, 'orders-green')?.role).toBe('primary');
    expect(d.actions.filter((a) => a.action === 'drain-backend').map((a) => (a.action === 'drain-backend' ? a.backend : ''))).toEqual(['orders-blue', 'orders-blue-r1', 'orders-green', 'orders-green-r1']);
    expect(d.actions.filter((a) => a.action === 'move-writer')).toHaveLength(1);
    // the worker's own actions never refreshed its configuration
    expect((await d.deployment('orders'))['checksum']).toBe(checksum);
  });

  it('cancellation in progress rolls back: the demoted blue writer is restored and AVAILABLE re-entered', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim, { explicit: true }), [explicit()]));
    await drive(d, sim, AVAILABLE, INITIATED, IN_PROGRESS);
    await d.waitForTopology((t) => shardOf(t, 'orders-green')?.shard === 'default', 'green moved in');
    await drive(d, sim, AVAILABLE);
    const restored = await d.waitForTopology((t) => shardOf(t, 'orders-blue')?.role === 'primary' && shardOf(t, 'orders-green')?.shard === 'green', 'blue writer restored');
    expect(restored.overlay.dns_pins).toEqual({});
    expect(d.phases('orders')).toEqual(['AVAILABLE', 'WRITER_SWITCHOVER_INITIATED', 'WRITER_SWITCHOVER_IN_PROGRESS', 'NONE', 'AVAILABLE']);
    expect((await d.deployment('orders'))['interval_ms']).toBe(250);
  });
});

describe('topology outcomes', () => {
  it('a topology drained in post-processing rolls back (pins removed, readers unshunned, writer returned)', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim), [automatic()]));
    await drive(d, sim, AVAILABLE, INITIATED, IN_PROGRESS, POST);
    await d.waitForTopology((t) => t.overlay.shunned.includes('orders-blue-r1'), 'shunned');
    await sim.empty();
    await d.waitForPhase('orders', 'NONE');
    await d.waitForTopology((t) => t.overlay.shunned.length === 0 && Object.keys(t.overlay.dns_pins).length === 0 && t.overlay.writers_serving_reads.length === 0, 'rolled back');
    expect(d.phases('orders').slice(-1)).toEqual(['NONE']);
    expect(d.phases('orders')).not.toContain('SWITCHOVER_COMPLETED');
  });

  it('an absent table (ER_NO_SUCH_TABLE) rolls back and returns to the existence check; a query error changes nothing', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim), [automatic()]));
    await drive(d, sim, AVAILABLE, INITIATED);
    await sim.queryErrors();
    await waitForMetric(d, 'dbproxy_bgd_polls_total', { deployment: 'orders', outcome: 'query_error' }, 3);
    expect((await d.deployment('orders'))['phase']).toBe('WRITER_SWITCHOVER_INITIATED');
    await sim.absent();
    await d.waitForPhase('orders', 'NONE');
    expect((await d.deployment('orders'))['tableCheck']).toBe(true);
    expect(await d.metrics().then((m) => metricValue(m, 'dbproxy_bgd_polls_total', { deployment: 'orders', outcome: 'absent' }))).toBeGreaterThan(0);
    await sim.status(A.blue, A.green, 'AVAILABLE');
    await d.waitForPhase('orders', 'AVAILABLE');
    await sim.empty();
    await d.waitForPhase('orders', 'NONE');
    const m = await d.metrics();
    expect(metricValue(m, 'dbproxy_bgd_polls_total', { deployment: 'orders', outcome: 'empty' })).toBeGreaterThan(0);
    expect(d.phases('orders')).toEqual(['AVAILABLE', 'WRITER_SWITCHOVER_INITIATED', 'NONE', 'AVAILABLE', 'NONE']);
  });

  it('an empty target status or an unknown one: NONE without rollback vs rollback', async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim, { explicit: true }), [explicit()]));
    await drive(d, sim, AVAILABLE, IN_PROGRESS);
    await sim.status(A.blue, A.green, 'SOMETHING_NEW');
    await d.waitForPhase('orders', 'NONE');
    // unknown status from an active state: the rollback helper ran (the demotion was undone); its
    // action and the phase change travel on different subjects, so either may arrive first
    const deployed = d;
    const moves = () => deployed.actions.filter((a) => a.action === 'move-writer').length;
    await waitFor(() => moves() >= 2, { timeoutMs: 5_000, description: 'the restoring move-writer' });
    await new Promise((r) => setTimeout(r, 300));
    expect(moves()).toBe(2);
    await drive(d, sim, AVAILABLE, IN_PROGRESS);
    await sim.status(A.blue, A.green, '');
    await d.waitForPhase('orders', 'NONE');
    await new Promise((r) => setTimeout(r, 300));
    // empty status: NONE without the rollback helper (no restoring move-writer)
    expect(d.actions.filter((a) => a.action === 'move-writer')).toHaveLength(3);
  });
});

describe('probe destination and TLS selection (the blue endpoint off the network: only the direct green probe observes)', () => {
  const tls = () => `tls = { enabled = true, use_webpki_roots = false, ca_path = "${estate.caPath}" }`;
  /** Runs `sql` as root on a server; `local` keeps it out of the binary log (that server only). */
  async function asRoot(server: { host: string; port: number }, sql: string[], local = false): Promise<void> {
    const c = await createConnection({ host: server.host, port: server.port, user: 'root', password: '' });
    if (local) await c.query('SET sql_log_bin = 0');
    for (const q of sql) await c.query(q);
    await c.end();
  }
  const MONITOR_GRANTS = 'SELECT, PROCESS, SLAVE MONITOR, BINLOG MONITOR ON *.*';
  beforeAll(async () => {
    // a TLS-only account on every estate-A server, and one that exists on blue only
    await asRoot(estate.a.primary, ["CREATE USER IF NOT EXISTS 'tlsmon'@'%' IDENTIFIED BY 'tls-pw' REQUIRE SSL", `GRANT ${MONITOR_GRANTS} TO 'tlsmon'@'%'`]);
    await asRoot(estate.a.primary, ["CREATE USER IF NOT EXISTS 'bluemon'@'%' IDENTIFIED BY 'blue-pw'", `GRANT ${MONITOR_GRANTS} TO 'bluemon'@'%'`], true);
    await estate.a.waitForReplicaCatchUp();
  });
  afterEach(async () => {
    await estate.simA.reachable(A.blue, true);
  });

  async function throughDirectProbe(dep: Deployed): Promise<void> {
    const sim = estate.simA;
    await dep.waitForPhase('orders', 'AVAILABLE');
    expect((await dep.deployment('orders'))['probe']).toEqual({ host: sim.endpoint(A.green).ip, port: sim.port, tls: true, direct: true, failures: 0 });
    await sim.reachable(A.blue, false);
    await drive(dep, sim, INITIATED, IN_PROGRESS, POST);
    await dep.waitForTopology((t) => t.overlay.dns_pins[A.blue] === sim.endpoint(A.green).ip, 'writer pinned (observed through green only)');
    expect((await dep.deployment('orders'))['probe']).toMatchObject({ direct: true, tls: true, failures: 0 });
  }

  it("automatic mode: green IP, blue port, the blue writer's TLS and account", async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    const backends = backendsA(sim).map((b) => (b.name === 'orders-blue' ? { ...b, extra: `${tls()}\nmonitor_username = "tlsmon"\nmonitor_password = "tls-pw"` } : b));
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backends, [automatic()]));
    await throughDirectProbe(d);
  });

  it("explicit mode: the green row's TLS and account (blue's account does not exist on green)", async () => {
    const sim = estate.simA;
    await sim.status(A.blue, A.green, 'AVAILABLE');
    const backends = backendsA(sim, { explicit: true }).map((b) =>
      b.name === 'orders-blue' ? { ...b, extra: 'monitor_username = "bluemon"\nmonitor_password = "blue-pw"' } : b.name === 'orders-green' ? { ...b, extra: `${tls()}\nmonitor_username = "tlsmon"\nmonitor_password = "tls-pw"` } : b,
    );
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backends, [explicit()]));
    await throughDirectProbe(d);
  });
});

describe("effects in mysql-edge's pools", () => {
  /** The edge's connections on a server: they run in database `pooldb` (the monitors' have none). */
  async function edgeThreads(server: Connection): Promise<number[]> {
    const [rows] = await server.query<RowDataPacket[]>("SELECT id FROM information_schema.processlist WHERE db = 'pooldb'");
    return rows.map((r) => Number(r['id'])).sort();
  }
  const served = async (c: Connection) => {
    const [[row]] = await c.query<RowDataPacket[]>('SELECT @@server_id AS server, CONNECTION_ID() AS id');
    return { server: Number(row?.['server']), id: Number(row?.['id']) };
  };

  it("post-processing retires the blue writer's connections: idle ones close at once, a used one is destroyed on release, never reused", async () => {
    const sim = estate.simA;
    const blue = await createConnection({ host: estate.a.primary.host, port: estate.a.primary.port, user: 'root', password: '' });
    await blue.query('CREATE DATABASE IF NOT EXISTS pooldb');
    await blue.query('CREATE TABLE IF NOT EXISTS pooldb.t (id INT PRIMARY KEY, v INT)');
    await blue.query('REPLACE INTO pooldb.t VALUES (1, 0), (2, 0), (3, 0), (4, 0)');
    await estate.a.waitForReplicaCatchUp();
    await sim.status(A.blue, A.green, 'AVAILABLE');
    const [rw, ro] = [await freePort(), await freePort()];
    const edge = `[[users]]\nname = "app"\npassword = "app-secret"\n[mysql]\nenabled = true\nread_write_listen = "127.0.0.1:${rw}"\nread_only_listen = "127.0.0.1:${ro}"\nread_after_write_seconds = 0\n`;
    d = await deploy(estate.nats.url, configToml(estate.nats.url, sim.hosts(), backendsA(sim), [automatic()], edge), [topologyService, mysqlEdgeService, bgdMonitorService]);
    await d.waitForPhase('orders', 'AVAILABLE');
    const session = () => createConnection({ host: '127.0.0.1', port: rw, user: 'app', password: 'app-secret', database: 'pooldb' });
    const clients: Connection[] = [];
    try {
      // warm the writer's pool: four writes at once leave four idle connections on blue
      const warm = await Promise.all([1, 2, 3, 4].map(() => session()));
      await Promise.all(warm.map((c, i) => c.query('UPDATE t SET v = SLEEP(0.2) WHERE id = ?', [i + 1])));
      await Promise.all(warm.map((c) => c.end()));
      // a session inside a writing transaction holds its blue connection
      const held = await session();
      clients.push(held);
      await held.query('BEGIN');
      await held.query('UPDATE t SET v = v + 1 WHERE id = 1');
      const heldOn = await served(held);
      expect(heldOn.server).toBe(estate.a.primary.serverId);
      await waitFor(async () => (await edgeThreads(blue)).length >= 3, { timeoutMs: 3000, description: 'idle edge connections on blue' });

      await drive(d, sim, INITIATED, IN_PROGRESS, POST);
      await d.waitForTopology((t) => t.overlay.dns_pins[A.blue] === sim.endpoint(A.green).ip, 'writer pinned');
      expect(d.actions.filter((a) => a.action === 'drain-backend').map((a) => a.action === 'drain-backend' && a.backend)).toEqual(['orders-blue']);
      // idle connections closed at once: only the held one is left on blue
      await waitFor(async () => (await edgeThreads(blue)).join() === String(heldOn.id), { timeoutMs: 2000, description: 'only the held connection left on blue' });
      // the transaction finishes on its own connection
      expect(await served(held)).toEqual(heldOn);
      await held.query('COMMIT');
      const [[row]] = await blue.query<RowDataPacket[]>('SELECT v FROM pooldb.t WHERE id = 1');
      expect(Number(row?.['v'])).toBe(1);
      // released: destroyed, not parked for the session nor handed to another
      await waitFor(async () => (await edgeThreads(blue)).length === 0, { timeoutMs: 2000, description: 'the held connection closed on blue' });
      const after = await served(held);
      expect(after).not.toEqual(heldOn);
      expect(after.server).not.toBe(estate.a.primary.serverId);
      const other = await session();
      clients.push(other);
      expect((await served(other)).server).not.toBe(estate.a.primary.serverId);
    } finally {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
      await blue.end();
    }
  });
});

async function waitForMetric(dep: Deployed, name: string, labels: Record<string, string>, atLeast: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (metricValue(await dep.metrics(), name, labels) >= atLeast) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} ${JSON.stringify(labels)} stayed below ${atLeast}`);
}
