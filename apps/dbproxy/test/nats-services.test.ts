// The services apart on a NATS that runs as deployed (TLS, deploy/nats/authorization.conf): each
// `./bin/dbproxy start <service>` logs in with its own user; a config epoch from config-api
// reaches mysql-edge; a wrong password stops a service with exit code 1; NATS restarted for 20 s
// under a mysql2 read loop through the edge costs the client nothing, and the edge reconnects.
// Needs `npm run build`; uses the machine's MariaDB on 127.0.0.1:3306 (root, SELECT only).
import { createConnection, type Connection } from 'mysql2/promise';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { startSecureNats, type SecureNats, type ServiceName } from './support/secure-nats';

jest.setTimeout(240_000);

const TOKEN = 'nats-services-admin-token-0123456789';

interface EdgeRow {
  protocol: string;
  epoch: number;
  sentAt?: string;
  sent_at?: string;
}

describe('services apart on an authorized TLS NATS', () => {
  let dir: TempDir;
  let nats: SecureNats;
  let configPath: string;
  const ports: Record<string, number> = {};
  const procs: DbproxyProcess[] = [];

  const start = (service: ServiceName, password?: string): DbproxyProcess => {
    const proc = startDbproxy(['start', service, '--config', configPath], { DBPROXY_NATS_USER: service, DBPROXY_NATS_PASSWORD: password ?? nats.passwords[service] });
    procs.push(proc);
    return proc;
  };
  const ready = async (proc: DbproxyProcess, adminPort: number): Promise<void> => {
    await waitForHttp(`http://127.0.0.1:${adminPort}/readyz`, 200, 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${proc.output()}`);
    });
  };
  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const res = await fetch(`http://127.0.0.1:${ports['api']}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const mysqlEdges = async (): Promise<EdgeRow[]> => ((await api('GET', '/v1/edges')).json['edges'] as EdgeRow[]).filter((e) => e.protocol === 'mysql');

  beforeAll(async () => {
    dir = await tmpDir('nats-services');
    nats = await startSecureNats(dir.path);
    for (const name of ['api', 'apiAdmin', 'topology', 'edgeAdmin', 'rw', 'ro']) ports[name] = await freePort();
    configPath = writeConfig(
      dir.path,
      'dbproxy.toml',
      `
[bus]
nats_url = "${nats.server.url}"
user = "\${DBPROXY_NATS_USER}"
password = "\${DBPROXY_NATS_PASSWORD}"
connect_timeout_seconds = 5
heartbeat_interval_seconds = 1
[bus.tls]
enabled = true
ca_file = "${nats.pki.ca}"
[telemetry]
log_level = "info"
[proxy.admin]
config_api = "127.0.0.1:${ports['apiAdmin']}"
topology = "127.0.0.1:${ports['topology']}"
mysql_edge = "127.0.0.1:${ports['edgeAdmin']}"
[health]
interval_seconds = 1
timeout_seconds = 1
failures_before_down = 1
successes_before_up = 1
[[users]]
name = "app"
password = "app-secret"
mysql_auth_plugin = "mysql_native_password"
[mysql]
enabled = true
read_write_listen = "127.0.0.1:${ports['rw']}"
read_only_listen = "127.0.0.1:${ports['ro']}"
[postgres]
enabled = false
[redis]
enabled = false
[[mysql_backends]]
name = "primary"
address = "127.0.0.1:3306"
role = "primary"
[config_api]
listen = "127.0.0.1:${ports['api']}"
edge_heartbeat_ttl_seconds = 5
[[config_api.tokens]]
name = "ops"
token = "${TOKEN}"
`,
    );
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await nats?.server.destroy();
    await dir?.remove();
  });

  it('each service logs in as itself; a config epoch from config-api reaches mysql-edge', async () => {
    const configApi = start('config-api');
    await ready(configApi, ports['apiAdmin'] as number);
    const topology = start('topology');
    const edge = start('mysql-edge');
    await ready(topology, ports['topology'] as number);
    await ready(edge, ports['edgeAdmin'] as number);
    const current = await api('GET', '/v1/config');
    const put = await api('PUT', '/v1/config', { ...(current.json['config'] as object), mysql: { ...((current.json['config'] as Record<string, object>)['mysql'] ?? {}), read_after_write_seconds: 3 } });
    expect(put.status).toBe(200);
    const epoch = put.json['epoch'] as number;
    expect(epoch).toBeGreaterThan(current.json['epoch'] as number);
    await waitFor(async () => (await mysqlEdges()).some((e) => e.epoch === epoch), { timeoutMs: 15_000, description: `mysql-edge heartbeat at epoch ${epoch}` });
    // nobody hit a permission the authorization file does not grant
    expect(nats.server.logTail(400)).not.toMatch(/Violation/); // "Publish Violation", "Subscription Violation"
  });

  it('stops a service whose NATS password is wrong: exit code 1 and a clear message', async () => {
    const wrong = start('pg-edge', 'not-the-password');
    const code = await Promise.race([wrong.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
    expect({ code, output: wrong.output() }).toEqual({ code: 1, output: expect.stringMatching(/NATS at .* refused the credentials/) });
    expect(wrong.output()).not.toContain('not-the-password');
  });

  it('keeps a mysql2 read loop through the edge error-free while NATS is away for 20 s, and the edge reconnects', async () => {
    const conn: Connection = await createConnection({ host: '127.0.0.1', port: ports['rw'] as number, user: 'app', password: 'app-secret' });
    const errors: string[] = [];
    let reads = 0;
    let running = true;
    const loop = (async () => {
      while (running) {
        try {
          const [rows] = await conn.query('SELECT 1 AS one');
          if ((rows as { one: number }[])[0]?.one === 1) reads += 1;
          // a fresh session now and then: new sessions are admitted on the last good config too
          if (reads % 20 === 0) {
            const fresh = await createConnection({ host: '127.0.0.1', port: ports['rw'] as number, user: 'app', password: 'app-secret' });
            await fresh.query('SELECT 2');
            await fresh.end();
          }
        } catch (err) {
          errors.push(String(err));
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      await waitFor(() => reads > 10, { timeoutMs: 10_000, description: 'reads before the outage' });
      await nats.server.stop();
      const duringFrom = reads;
      await new Promise((r) => setTimeout(r, 20_000));
      const during = reads - duringFrom;
      const restartedAt = new Date();
      await nats.server.start();
      // the edge is back on the bus: config-api hears its heartbeats again
      await waitFor(async () => (await mysqlEdges()).some((e) => new Date(e.sentAt ?? e.sent_at ?? 0) > restartedAt), { timeoutMs: 30_000, description: 'mysql-edge heartbeat after the restart' });
      const after = reads;
      await waitFor(() => reads > after + 10, { timeoutMs: 10_000, description: 'reads after the restart' });
      expect({ errors, readsDuringOutage: during > 100 }).toEqual({ errors: [], readsDuringOutage: true });
    } finally {
      running = false;
      await loop;
      await conn.end();
    }
  });
});
