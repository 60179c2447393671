// topology on a real MariaDB primary + GTID replica, with the service and an edge-side client in
// separate processes on a real nats-server: down/up, lag, blue/green actions, readiness, fail static.
import { createConnection, type Connection } from 'mysql2/promise';
import { createBus, KvRecords, openRecords, publishMessage, Subjects, type BgdAction, type Bus } from '@dbproxy/bus';
import { documentHash } from '@dbproxy/runtime';
import { startMariaDb, startNats, tmpDir, waitFor, type MariaDbServer, type NatsServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import type { TopologyView } from '@dbproxy/topology-client';
import { baseToml, freePort, INTERVAL_SECONDS, startEdgeProbe, startTopology, waitForBackend, writeConfig, type EdgeProbe, type TopologyProcess } from './support';

jest.setTimeout(120_000);

describe('topology with MariaDB', () => {
  let db: ReplicatedServers<MariaDbServer>;
  let nats: NatsServer;
  let dir: TempDir;
  let topology: TopologyProcess;
  let edge: EdgeProbe;
  let bus: Bus;
  const connections: Connection[] = [];

  const connect = async (server: MariaDbServer) => {
    const c = await createConnection({ host: server.host, port: server.port, user: server.user, password: server.password });
    connections.push(c);
    return c;
  };
  const action = (a: Record<string, unknown>) =>
    publishMessage(bus, Subjects.bgdActions, {}, { deployment: 'bg1', actionId: `a-${Date.now()}-${Math.random()}`, issuedAt: new Date().toISOString(), reason: 'test', ...a } as BgdAction);

  beforeAll(async () => {
    [db, nats, dir] = await Promise.all([startMariaDb({ replicas: 1 }), startNats(), tmpDir('topology-mysql')]);
    const adminPort = await freePort();
    const path = writeConfig(
      dir.path,
      'dbproxy.toml',
      `${baseToml(nats.url, adminPort)}
[[mysql_backends]]
name = "db-primary"
address = "127.0.0.1:${db.primary.port}"
role = "primary"
[[mysql_backends]]
name = "db-replica"
address = "localhost:${db.replicas[0]?.port}"
role = "replica"
max_replica_lag_seconds = 2
`,
    );
    topology = await startTopology(path, adminPort);
    edge = await startEdgeProbe(path, 'mysql');
    bus = createBus({ name: 'test-bgd', natsUrl: nats.url });
    await bus.waitForConnection(5_000);
    await waitFor(() => edge.client.readiness().status === 'ready', { timeoutMs: 20_000, description: 'the edge to be ready' });
  });

  afterAll(async () => {
    await Promise.allSettled(connections.map((c) => c.end()));
    await edge?.stop();
    await bus?.close();
    await topology?.proc.stop('SIGKILL');
    await Promise.allSettled([db?.destroy(), nats?.destroy()]);
    await dir?.remove();
  });

  it('publishes the primary and the replica healthy, with roles, GTID positions and a ready edge', async () => {
    const { client } = edge;
    expect(client.usable('default', 'primary').map((b) => b.name)).toEqual(['db-primary']);
    expect(client.usable('default', 'replica').map((b) => b.name)).toEqual(['db-replica']);
    expect(client.primary('default')).toMatchObject({ name: 'db-primary', healthy: true, connectAddress: `127.0.0.1:${db.primary.port}` });
    expect((await edge.readyz()).status).toBe(200);

    const primary = await connect(db.primary);
    await primary.query('CREATE DATABASE IF NOT EXISTS topo');
    await primary.query('CREATE TABLE IF NOT EXISTS topo.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)');
    const [[{ gtid }]] = (await primary.query('SELECT @@gtid_current_pos AS gtid')) as unknown as [[{ gtid: string }]];
    expect(gtid).toMatch(/^\d+-\d+-\d+/);
    // the replica's reported position reaches the primary's GTID: positions flow to the edges
    await waitFor(() => client.lastHealth('db-replica')?.position === gtid, { timeoutMs: 15_000, description: `replica position ${gtid}` });
    expect(client.lastHealth('db-primary')).toMatchObject({ up: true, roleObserved: 'primary', lagSeconds: null, position: gtid });
    expect(client.lastHealth('db-replica')).toMatchObject({ up: true, roleObserved: 'replica', lagSeconds: 0 });
  });

  it('shows a stopped replica down within three intervals and up again once it restarts', async () => {
    const replica = db.replicas[0] as MariaDbServer;
    await replica.stop();
    const downAfterMs = await waitForBackend(edge.client, 'db-replica', (b) => !b.healthy);
    expect(downAfterMs).toBeLessThanOrEqual(3 * INTERVAL_SECONDS * 1000);
    expect(edge.client.usable('default', 'replica')).toEqual([]);
    expect(edge.client.readiness().status).toBe('ready'); // only primaries decide readiness

    await replica.start();
    await waitForBackend(edge.client, 'db-replica', (b) => b.healthy && !b.lagging);
    expect(edge.client.usable('default', 'replica').map((b) => b.name)).toEqual(['db-replica']);
  });

  it('marks the replica lagging while replication is stopped and the primary takes writes, and clears it on resume', async () => {
    const replica = await connect(db.replicas[0] as MariaDbServer);
    const primary = await connect(db.primary);
    await replica.query('STOP SLAVE');
    await primary.query('INSERT INTO topo.t (v) VALUES (1), (2), (3)');
    await waitForBackend(edge.client, 'db-replica', (b) => b.lagging && b.healthy);
    expect(edge.client.usable('default', 'replica')).toEqual([]);
    // the lag itself is measured too: the primary's positions move on without the replica
    await waitFor(() => (edge.client.lastHealth('db-replica')?.lagSeconds ?? 0) > 0.5, { description: 'a measured lag' });
    expect(edge.client.usable('default', 'primary').map((b) => b.name)).toEqual(['db-primary']);

    await replica.query('START SLAVE');
    await waitForBackend(edge.client, 'db-replica', (b) => !b.lagging);
    expect(edge.client.usable('default', 'replica').map((b) => b.name)).toEqual(['db-replica']);
  });

  it('applies blue/green actions: shun, DNS pin, drain with its deadline, and a moved writer', async () => {
    const { client } = edge;
    const changes: [TopologyView, TopologyView][] = [];
    const unlisten = client.onChange((next, previous) => changes.push([next, previous]));

    action({ action: 'shun', backend: 'db-replica' });
    await waitForBackend(client, 'db-replica', (b) => b.shunned);
    expect(client.usable('default', 'replica')).toEqual([]);
    action({ action: 'unshun', backend: 'db-replica' });
    await waitForBackend(client, 'db-replica', (b) => !b.shunned && b.healthy);

    const port = db.replicas[0]?.port;
    action({ action: 'pin-dns', hostname: 'localhost', ip: '127.0.0.1' });
    await waitForBackend(client, 'db-replica', (b) => b.dnsPin === '127.0.0.1');
    expect(client.backend('db-replica')).toMatchObject({ address: `localhost:${port}`, connectAddress: `127.0.0.1:${port}` });
    // monitor connections follow the pin: later checks still find the replica up through its pinned address
    const pinnedAt = new Date().toISOString();
    await waitFor(() => (client.lastHealth('db-replica')?.checkedAt ?? '') > pinnedAt, { description: 'a check after the pin' });
    expect(client.lastHealth('db-replica')?.up).toBe(true);
    expect(client.backend('db-replica')?.healthy).toBe(true);
    action({ action: 'unpin-dns', hostname: 'localhost' });
    await waitForBackend(client, 'db-replica', (b) => b.dnsPin === null && b.connectAddress === `localhost:${port}`);

    action({ action: 'drain-backend', backend: 'db-replica', deadlineMs: 1500 });
    await waitForBackend(client, 'db-replica', (b) => b.draining);
    expect(client.usable('default', 'replica')).toEqual([]);
    expect(changes.some(([next, previous]) => next.backend('db-replica')?.draining && !previous.backend('db-replica')?.draining)).toBe(true);
    await waitForBackend(client, 'db-replica', (b) => !b.draining); // the drain ends at its deadline

    action({ action: 'move-writer', shard: 'default', from: 'db-primary', to: 'db-replica' });
    await waitFor(() => client.primary('default')?.name === 'db-replica', { description: 'db-replica as the writer' });
    expect(client.backend('db-primary')?.role).toBe('replica');
    action({ action: 'move-writer', shard: 'default', from: 'db-replica', to: 'db-primary' });
    await waitFor(() => client.primary('default')?.name === 'db-primary', { description: 'db-primary back as the writer' });
    await waitForBackend(client, 'db-replica', (b) => b.role === 'replica' && !b.lagging);
    unlisten();
  });

  it('makes the edge unready (503) with the reason while the primary is down, and ready once it is back', async () => {
    await db.primary.stop();
    const { body } = await waitFor(async () => {
      const r = await edge.readyz();
      return r.status === 503 ? r : false;
    }, { timeoutMs: 15_000, description: '/readyz 503' });
    expect(body.reasons.join('\n')).toMatch(/mysql-edge\/topology: unready \(shard default primary db-primary \(127\.0\.0\.1:\d+\) is down: .*(ECONNREFUSED|refused)/);
    expect(edge.client.primary('default')).toMatchObject({ name: 'db-primary', healthy: false });

    await db.primary.start();
    await waitFor(async () => (await edge.readyz()).status === 200, { timeoutMs: 15_000, description: '/readyz 200 again' });
  });

  it('follows a new configuration epoch: a removed backend leaves the snapshot, and comes back with the next', async () => {
    const { client } = edge;
    const configs = await openRecords(bus, KvRecords.config);
    const current = await configs.get({});
    const document = current?.value?.config as { mysql_backends: Record<string, unknown>[] };
    const publish = async (doc: Record<string, unknown>) => {
      const epoch = await configs.put({}, { config: doc, hash: documentHash(doc), author: 'test', appliedAt: new Date().toISOString() });
      await waitFor(() => client.current().epoch === epoch, { timeoutMs: 15_000, description: `a snapshot of epoch ${epoch}` });
    };
    await publish({ ...document, mysql_backends: document.mysql_backends.filter((b) => b['name'] !== 'db-replica') });
    expect(client.backend('db-replica')).toBeUndefined();
    expect(client.usable('default', 'replica')).toEqual([]);
    await publish(document);
    await waitForBackend(client, 'db-replica', (b) => b.healthy && !b.lagging);
  });

  it('keeps serving the last snapshot, degraded, when topology dies, and follows a restarted topology', async () => {
    const { client } = edge;
    const generation = client.generation();
    const before = client.usable('default', 'primary');
    await topology.proc.stop('SIGKILL');

    const { status, body } = await waitFor(async () => {
      const r = await edge.readyz();
      return r.body.status === 'degraded' ? r : false;
    }, { timeoutMs: 15_000, description: 'a degraded edge' });
    expect(status).toBe(200);
    expect(body.reasons.join('\n')).toMatch(/mysql-edge\/topology: degraded \(no word from the topology service/);
    expect(client.generation()).toBe(generation);
    expect(client.usable('default', 'primary')).toBe(before);
    expect(client.readiness().status).toBe('degraded');

    topology = await topology.restart();
    await waitFor(() => client.generation() > generation && client.readiness().status === 'ready', { timeoutMs: 20_000, description: 'a newer generation from the restarted topology' });
    expect(client.usable('default', 'primary').map((b) => b.name)).toEqual(['db-primary']);
  });
});
