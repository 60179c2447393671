// config-api end to end: ./bin/dbproxy start config-api on a real nats-server, driven over HTTP.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createBus, KvRecords, openRecords, publishMessage, Subjects, type Bus } from '@dbproxy/bus';
import { freePort, startNats, tmpDir, waitFor, type NatsServer, type TempDir } from '@dbproxy/testing';
import { startDbproxy, waitForHttp, writeConfig, type DbproxyProcess } from '@dbproxy/runtime/testing';

jest.setTimeout(60_000);

interface OpenApiOperation {
  operationId?: string;
  security?: unknown;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { license?: { name?: string } };
  servers?: { url: string }[];
  security?: unknown;
  paths: Record<string, Record<string, OpenApiOperation>>;
}

/** Runs `redocly lint` (its recommended rules) over the document; its JSON report. */
async function redoclyLint(doc: unknown, dirPath: string): Promise<{ totals: Record<string, number>; problems: unknown[] }> {
  const file = join(dirPath, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const bin = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'lint', file, '--format=json'], { timeout: 60_000 }).catch(
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }),
  );
  return JSON.parse(stdout.slice(stdout.indexOf('{'))) as { totals: Record<string, number>; problems: unknown[] };
}

const ADMIN = 'admin-token-0123456789abcdef';
const VIEWER = 'viewer-token-0123456789abcdef';
const SECRETS = ['user-password-9f8e7d', 'backend-password-1a2b3c', ADMIN, VIEWER];

function configToml(natsUrl: string, apiPort: number, adminPort: number): string {
  return `
[bus]
nats_url = "${natsUrl}"
connect_timeout_seconds = 3
heartbeat_interval_seconds = 1
[telemetry]
log_level = "warn"
[proxy.admin]
config_api = "127.0.0.1:${adminPort}"
[[users]]
name = "app"
password = "${SECRETS[0]}"
[[mysql_backends]]
name = "db1"
address = "127.0.0.1:3306"
role = "primary"
password = "${SECRETS[1]}"
[config_api]
listen = "127.0.0.1:${apiPort}"
allow_literal_secrets = true
edge_heartbeat_ttl_seconds = 5
[[config_api.tokens]]
name = "ops"
token = "${ADMIN}"
[[config_api.tokens]]
name = "viewer"
token = "${VIEWER}"
role = "read_only"
`;
}

describe('config-api on NATS', () => {
  let nats: NatsServer;
  let dir: TempDir;
  let proxy: DbproxyProcess;
  let watcher: Bus;
  let api: string;
  let admin: string;
  const responses: string[] = [];

  async function call(method: string, path: string, opts: { token?: string; body?: unknown; ifMatch?: string; type?: string } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
    if (opts.ifMatch) headers['if-match'] = opts.ifMatch;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] = opts.type ?? 'application/json';
    }
    const res = await fetch(`${api}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    responses.push(text);
    return { status: res.status, etag: res.headers.get('etag'), json: JSON.parse(text) as Record<string, unknown> };
  }

  beforeAll(async () => {
    nats = await startNats();
    dir = await tmpDir('config-api');
    const [apiPort, adminPort] = [await freePort(), await freePort()];
    api = `http://127.0.0.1:${apiPort}`;
    admin = `http://127.0.0.1:${adminPort}`;
    const path = writeConfig(dir.path, 'dbproxy.toml', configToml(nats.url, apiPort, adminPort));
    proxy = startDbproxy(['start', 'config-api', '--config', path]);
    await waitForHttp(`${admin}/readyz`).catch((err) => {
      throw new Error(`config-api did not become ready: ${String(err)}\n${proxy.output()}`);
    });
    watcher = createBus({ name: 'test-watcher', natsUrl: nats.url });
    await watcher.waitForConnection(5_000);
  });

  afterAll(async () => {
    await watcher?.close();
    await proxy?.stop('SIGKILL');
    await nats?.destroy();
    await dir?.remove();
  });

  it('refuses requests without a valid token', async () => {
    expect((await call('GET', '/v1/config')).status).toBe(401);
    expect((await call('GET', '/v1/config', { token: 'not-a-token' })).status).toBe(401);
  });

  it('serves the seeded configuration as epoch 1 with secrets redacted', async () => {
    const res = await call('GET', '/v1/config', { token: VIEWER });
    expect(res.status).toBe(200);
    expect(res.etag).toBe('"1"');
    expect(res.json).toMatchObject({ epoch: 1, config: { users: [{ name: 'app', password: '********' }] } });
  });

  it('raises the epoch on PUT and a KV watcher in another process sees it within a second', async () => {
    const seen: number[] = [];
    const records = await openRecords(watcher, KvRecords.config);
    const sub = records.watch({}, (r) => {
      seen.push(r.revision);
    });
    await sub.ready;
    const current = await call('GET', '/v1/config', { token: ADMIN });
    const config = current.json['config'] as Record<string, unknown>;
    const started = Date.now();
    const put = await call('PUT', '/v1/config', { token: ADMIN, ifMatch: '"1"', body: { ...config, mysql: { read_after_write_seconds: 5 } } });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ epoch: 2, changed: true, summary: 'changed mysql' });
    await waitFor(() => seen.includes(2), { timeoutMs: 1_000, description: 'epoch 2 in the watcher' });
    expect(Date.now() - started).toBeLessThan(1_000);
    sub.unsubscribe();
    // the secrets sent back masked kept their values
    const stored = await records.get({});
    expect(JSON.stringify(stored?.value?.config)).toContain(SECRETS[0]);
  });

  it('answers a stale If-Match with 409', async () => {
    const res = await call('PUT', '/v1/config', { token: ADMIN, ifMatch: '1', body: { users: [] } });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ error: 'stale_epoch', current_epoch: 2 });
  });

  it('refuses writes with a read-only token', async () => {
    expect((await call('PUT', '/v1/config', { token: VIEWER, body: {} })).status).toBe(403);
    expect((await call('POST', '/v1/config/rollback/1', { token: VIEWER })).status).toBe(403);
  });

  it('answers an invalid body with 400 listing every problem with its key path', async () => {
    const res = await call('PUT', '/v1/config', {
      token: ADMIN,
      type: 'application/toml',
      body: '[[mysql_backends]]\nname = "a"\naddress = "nohost"\nrole = "primary"\n[[mysql_backends]]\nname = "a"\naddress = "h:1"\nrole = "boss"\n',
    });
    expect(res.status).toBe(400);
    expect(res.json['issues']).toEqual([
      { path: 'mysql_backends[0].address', message: 'expected host:port' },
      { path: 'mysql_backends[1].role', message: 'expected "primary" or "replica"' },
    ]);
    const validate = await call('POST', '/v1/config/validate', { token: VIEWER, body: { mysql: { enabled: true } } });
    expect(validate.status).toBe(400);
    expect(validate.json['issues']).toEqual([{ path: 'mysql.enabled', message: 'needs at least one [[mysql_backends]] entry' }]);
  });

  it('refuses literal secrets with 400 naming each key path when the document does not opt in', async () => {
    const doc = (password: string) => `[[users]]\nname = "app"\npassword = "\${APP_PW:-}"\n[[mysql_backends]]\nname = "db1"\naddress = "127.0.0.1:3306"\nrole = "primary"\npassword = "${password}"\n[config_api]\nallow_literal_secrets = false\ntokens = [{ name = "ops", token = "${ADMIN}" }, { name = "new", token = "new-literal-token-5d1e" }]\n`;
    const literal = await call('PUT', '/v1/config', { token: ADMIN, type: 'application/toml', body: doc('literal-pw-7c6b') });
    expect(literal.status).toBe(400);
    expect(literal.json['issues']).toEqual([
      { path: 'mysql_backends[0].password', message: expect.stringContaining('literal secret refused') },
      { path: 'config_api.tokens[1].token', message: expect.stringContaining('literal secret refused') },
    ]); // tokens[0] is the literal the KV already holds (seeded from --config): carried over, not new
  });

  it('lists the history and rolls back to an earlier epoch as a new epoch', async () => {
    const epochs = await call('GET', '/v1/config/epochs', { token: VIEWER });
    expect(epochs.json).toMatchObject({
      current: 2,
      epochs: [
        { epoch: 2, author: 'ops', summary: 'changed mysql' },
        { epoch: 1, summary: 'initial configuration' },
      ],
    });
    const rollback = await call('POST', '/v1/config/rollback/1', { token: ADMIN, ifMatch: '"2"' });
    expect(rollback.json).toMatchObject({ epoch: 3, summary: 'rollback to epoch 1' });
    const now = await call('GET', '/v1/config', { token: VIEWER });
    expect((now.json['config'] as { mysql?: unknown }).mysql).toBeUndefined();
    expect((await call('POST', '/v1/config/rollback/99', { token: ADMIN })).status).toBe(404);
  });

  it('follows the KV: its own runtime applies every new epoch', async () => {
    await waitFor(async () => (await (await fetch(`${admin}/metrics`)).text()).includes('dbproxy_config_epoch{service="config-api"} 3'), {
      timeoutMs: 5_000,
      description: 'epoch 3 applied by the config-api process',
    });
  });

  it('lists live edges from heartbeats, keys in snake_case', async () => {
    publishMessage(watcher, Subjects.edgeHeartbeat, {}, {
      instanceId: 'edge-test-1',
      protocol: 'mysql',
      epoch: 3,
      sessions: 12,
      version: '0.1.0',
      adminAddress: '127.0.0.1:9101',
      startedAt: new Date().toISOString(),
      sentAt: new Date().toISOString(),
    });
    const edges = await waitFor(async () => {
      const res = await call('GET', '/v1/edges', { token: VIEWER });
      const list = res.json['edges'] as { instance_id: string }[];
      return list.length > 0 ? list : false;
    });
    expect(edges).toEqual([
      {
        instance_id: 'edge-test-1',
        protocol: 'mysql',
        epoch: 3,
        sessions: 12,
        version: '0.1.0',
        admin_address: '127.0.0.1:9101',
        started_at: expect.any(String),
        sent_at: expect.any(String),
        last_seen: expect.any(String),
      },
    ]);
  });

  it('publishes an OpenAPI document that redocly lints clean, and a Swagger UI, without a token', async () => {
    const res = await fetch(`${api}/docs/json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OpenApiDocument;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.license?.name).toBeTruthy();
    expect(doc.servers?.[0]?.url).toBe(api);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/config', '/v1/config/validate', '/v1/config/epochs', '/v1/config/rollback/{epoch}', '/v1/edges', '/v1/backends', '/v1/backends/{name}/drain', '/v1/backends/{name}/undrain']),
    );
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect([where, op.operationId]).toEqual([where, expect.any(String)]);
        expect([where, op.security ?? doc.security]).toEqual([where, [{ bearerAuth: [] }]]);
        expect([where, op.responses['401']]).toEqual([where, expect.anything()]);
        for (const [code, response] of Object.entries(op.responses)) {
          expect([where, code, response.content?.['application/json']?.schema]).toEqual([where, code, expect.anything()]);
        }
      }
    }
    expect(Object.keys(doc.paths['/v1/config']!['put']!.requestBody?.content ?? {})).toEqual(expect.arrayContaining(['application/json', 'application/toml']));
    const lint = await redoclyLint(doc, dir.path);
    expect(lint.problems).toEqual([]);
    expect(lint.totals).toMatchObject({ errors: 0, warnings: 0 });

    const ui = await fetch(`${api}/docs`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/text\/html/);
    expect(await ui.text()).toMatch(/swagger/i);
  });

  it('never returned a secret in any response', () => {
    expect(responses.length).toBeGreaterThan(10);
    for (const body of responses) for (const secret of SECRETS) expect(body).not.toContain(secret);
  });

  it('drains and exits 0 on SIGTERM', async () => {
    expect(await proxy.stop('SIGTERM')).toBe(0);
  });
});
