// Least privilege on NATS (deploy/nats/authorization.conf) on a real nats-server with TLS: every
// service logs in with its own user and does its job; the server refuses what a service does not
// own (writing the configuration KV, publishing blue/green actions, answering XA requests), wrong
// credentials and an untrusted certificate.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, Events, type NatsConnection } from 'nats';
import { KvRecords, openRecords, type Bus, type ConfigRecord } from '@dbproxy/bus';
import { tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { ROOT, SERVICES, startSecureNats, type SecureNats, type ServiceName } from './support/secure-nats';

jest.setTimeout(90_000);

const record = (author: string): ConfigRecord => ({ config: { proxy: {} }, hash: author, author, appliedAt: new Date().toISOString() });
const enc = new TextEncoder();

describe('NATS authorization and TLS (deploy/nats)', () => {
  let dir: TempDir;
  let nats: SecureNats;
  const buses: Bus[] = [];
  const raw: NatsConnection[] = [];
  const open = async (service: ServiceName): Promise<Bus> => {
    const bus = nats.bus(service);
    buses.push(bus);
    await bus.waitForConnection(10_000);
    return bus;
  };
  /** A plain nats.js connection as `service`, collecting the server's permission errors. */
  const rawAs = async (service: ServiceName): Promise<{ nc: NatsConnection; violations: string[] }> => {
    const nc = await connect({ servers: nats.server.url, user: service, pass: nats.passwords[service], tls: { ca: readFileSync(nats.pki.ca, 'utf8') } });
    raw.push(nc);
    const violations: string[] = [];
    void (async () => {
      for await (const s of nc.status()) {
        const context = (s as { permissionContext?: { operation: string; subject: string } }).permissionContext;
        if (s.type === Events.Error && context) violations.push(`${String(s.data)} ${context.operation} ${context.subject}`);
      }
    })();
    return { nc, violations };
  };

  beforeAll(async () => {
    dir = await tmpDir('nats-authorization');
    nats = await startSecureNats(dir.path);
  });
  afterAll(async () => {
    await Promise.all(raw.map((nc) => nc.close().catch(() => undefined)));
    await Promise.all(buses.map((b) => b.close()));
    await nats?.server.destroy();
    await dir?.remove();
  });

  it('is the file tools/nats/authorization.mjs renders, with one user per service', () => {
    const rendered = execFileSync(process.execPath, [join(ROOT, 'tools', 'nats', 'authorization.mjs'), '--print'], { encoding: 'utf8' });
    const file = readFileSync(join(ROOT, 'deploy', 'nats', 'authorization.conf'), 'utf8');
    expect(rendered).toBe(file);
    expect([...file.matchAll(/user: "([a-z-]+)"/g)].map((m) => m[1]).sort()).toEqual([...SERVICES].sort());
  });

  it('lets every service log in with its own password over TLS; config-api writes the config KV and an edge sees it', async () => {
    const all = await Promise.all(SERVICES.map((s) => open(s)));
    expect(all.map((b) => b.status())).toEqual(SERVICES.map(() => 'connected'));
    const configApi = await openRecords(all[0] as Bus, KvRecords.config);
    const edge = await openRecords(await open('pg-edge'), KvRecords.config);
    const seen: number[] = [];
    await edge.watch({}, (entry) => void seen.push(entry.revision)).ready;
    const revision = await configApi.put({}, record('config-api'));
    await waitFor(() => seen.includes(revision), { timeoutMs: 5_000, description: `edge sees epoch ${revision}` });
    expect((await edge.get({}))?.value?.author).toBe('config-api');
  });

  it.each(['mysql-edge', 'topology', 'bgd-monitor'] as const)('refuses %s writing the configuration KV', async (service) => {
    const before = await openRecords(await open('config-api'), KvRecords.config).then((s) => s.get({}));
    const { nc, violations } = await rawAs(service);
    nc.publish('$KV.dbproxy-config.current', enc.encode(JSON.stringify({ v: 1, ...record(service) })));
    await nc.flush();
    await waitFor(() => violations.includes('PERMISSIONS_VIOLATION publish $KV.dbproxy-config.current'), { timeoutMs: 5_000, description: 'permission violation' });
    // through the bus as the service would: the put fails and the value is unchanged
    const store = await openRecords(await open(service), KvRecords.config);
    await expect(store.put({}, record(service))).rejects.toThrow();
    const after = await store.get({});
    expect(after?.revision).toBe(before?.revision);
    expect(after?.value?.author).toBe('config-api');
  });

  it('refuses blue/green actions from anyone but bgd-monitor', async () => {
    const { nc: listener } = await rawAs('topology');
    const received: string[] = [];
    const sub = listener.subscribe('dbproxy.bgd.actions', { callback: (_e, m) => void received.push(m.string()) });
    await listener.flush();
    for (const service of ['topology', 'mysql-edge', 'config-api'] as const) {
      const { nc, violations } = await rawAs(service);
      nc.publish('dbproxy.bgd.actions', enc.encode(`forged by ${service}`));
      await nc.flush();
      await waitFor(() => violations.includes('PERMISSIONS_VIOLATION publish dbproxy.bgd.actions'), { timeoutMs: 5_000, description: `${service} refused` });
    }
    const { nc: monitor } = await rawAs('bgd-monitor');
    monitor.publish('dbproxy.bgd.actions', enc.encode('from bgd-monitor'));
    await monitor.flush();
    await waitFor(() => received.length > 0, { timeoutMs: 5_000, description: 'the real action arrives' });
    expect(received).toEqual(['from bgd-monitor']);
    sub.unsubscribe();
  });

  it('refuses answering XA requests to anyone but xa-coordinator', async () => {
    for (const service of ['mysql-edge', 'pg-edge', 'topology'] as const) {
      const { nc } = await rawAs(service);
      const refused = new Promise<string>((resolve) => nc.subscribe('dbproxy.xa.execute', { queue: 'dbproxy', callback: (err) => resolve(String(err)) }));
      await expect(refused).resolves.toMatch(/Permissions Violation for Subscription to "dbproxy\.xa\.execute"/i);
    }
    const { nc: coordinator } = await rawAs('xa-coordinator');
    coordinator.subscribe('dbproxy.xa.execute', { queue: 'dbproxy', callback: (_e, m) => m.respond(enc.encode('outcome')) });
    await coordinator.flush();
    const { nc: edge } = await rawAs('mysql-edge');
    expect((await edge.request('dbproxy.xa.execute', enc.encode('x'), { timeout: 5_000 })).string()).toBe('outcome');
  });

  it('refuses a wrong password, no credentials, another service password, an untrusted CA and no TLS', async () => {
    const attempts: [string, Bus, RegExp][] = [
      ['wrong password', nats.bus('pg-edge', { auth: { kind: 'user', user: 'pg-edge', password: 'wrong' } }), /DBP_ERR_BUS_AUTH_REFUSED|refused the credentials/],
      ['none', nats.bus('pg-edge', { auth: null }), /refused the credentials/],
      ['other password', nats.bus('pg-edge', { auth: { kind: 'user', user: 'config-api', password: nats.passwords['pg-edge'] } }), /refused the credentials/],
      ['untrusted CA', nats.bus('pg-edge', { ca: nats.pki.otherCa }), /TLS to NATS at .* failed/],
      ['no TLS', nats.bus('pg-edge', { ca: null }), /TLS to NATS at .* failed/],
    ];
    for (const [what, bus, expected] of attempts) {
      buses.push(bus);
      const outcome = await bus.waitForConnection(10_000).then(
        () => 'connected',
        (err: unknown) => `${(err as { code?: string }).code}: ${String(err)}`,
      );
      expect({ what, outcome }).toEqual({ what, outcome: expect.stringMatching(expected) });
    }
  });
});
