// TLS in every place spec 000 and 003 put it: passed through end to end when sharding is off,
// terminated with the frontend certificate when the shard key must be read, required before any
// credential in transaction mode, and towards backends with chain, hostname, private CA and client
// certificate (checked by the edge, and by the topology service, which finds a mismatched backend down).
import { readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { Client, type ClientConfig } from 'pg';
import { freePort, startPostgres, tmpDir, type PostgresServer, type ReplicatedServers, type TempDir } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { openBackendSocket } from '../src/backend-socket';
import { enableServerTls, makePki, type Pki } from './certificates';
import { startEdge, type EdgeHarness } from './harness';
import { errorOf, RawClient } from './raw-client';

jest.setTimeout(90_000);

let pg: ReplicatedServers<PostgresServer>;
let pki: Pki;
let dir: TempDir;

const SSL_QUERY = 'SELECT ssl, client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()';

beforeAll(async () => {
  dir = await tmpDir('pg-edge-pki');
  pki = await makePki(dir.path, POOL_USER);
  pg = await startPostgres({ replicas: 0 });
  await requirePoolPassword(pg, [`hostssl all ${POOL_USER} 127.0.0.1/32 scram-sha-256 clientcert=verify-full`]);
  await enableServerTls(pg.primary, pki);
});

afterAll(async () => {
  await pg?.destroy();
  await dir?.remove();
});

async function sslOf(config: ClientConfig): Promise<{ ssl: boolean; client_dn: string | null }> {
  const c = new Client({ host: '127.0.0.1', database: 'postgres', ...config });
  await c.connect();
  try {
    return (await c.query(SSL_QUERY)).rows[0];
  } finally {
    await c.end();
  }
}

describe('transparent mode', () => {
  let edge: EdgeHarness | undefined;
  afterEach(async () => {
    await edge?.stop();
    edge = undefined;
  });

  it('passes TLS through to the backend when sharding is off (the backend terminates it)', async () => {
    edge = await startEdge([{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary' }], 'routing_mode = "transparent"');
    const row = await sslOf({ port: edge.rwPort, user: 'postgres', ssl: { ca: readFileSync(pki.ca, 'utf8'), servername: 'localhost' } });
    expect(row.ssl).toBe(true);
  });

  it('terminates TLS with the frontend certificate when the shard key must be read', async () => {
    edge = await startEdge(
      [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary' }],
      'routing_mode = "transparent"\n[postgres.sharding]\nenabled = true\nmap = { kind = "value", values = { eu = "default" } }',
      `[proxy.tls]\nmode = "optional"\ncert_path = "${pki.server.cert}"\nkey_path = "${pki.server.key}"`,
    );
    const row = await sslOf({ port: edge.rwPort, user: 'postgres', options: '-c dbproxy.shard=eu', ssl: { ca: readFileSync(pki.ca, 'utf8'), servername: 'localhost' } });
    expect(row.ssl).toBe(false); // the proxy terminated it; its own hop to the backend is plain here
    const plain = await sslOf({ port: edge.rwPort, user: 'postgres', options: '-c dbproxy.shard=eu' });
    expect(plain.ssl).toBe(false);
  });

  it('sends a refusal after terminating TLS inside the TLS session (no usable replica, no fallback)', async () => {
    edge = await startEdge(
      [{ name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary' }],
      'routing_mode = "transparent"\nfallback_to_primary = false\n[postgres.sharding]\nenabled = true\nmap = { kind = "value", values = { eu = "default" } }',
      `[proxy.tls]\nmode = "optional"\ncert_path = "${pki.server.cert}"\nkey_path = "${pki.server.key}"`,
    );
    const tls = { ca: readFileSync(pki.ca, 'utf8'), servername: 'localhost' };
    for (const ssl of [tls, false] as const) {
      const c = new Client({ host: '127.0.0.1', port: edge.roPort, user: 'postgres', database: 'postgres', options: '-c dbproxy.shard=eu', ssl });
      await expect(c.connect()).rejects.toMatchObject({ code: '08006', message: expect.stringContaining('no usable replica backend') });
    }
  });

  it('answers a TLS-passthrough client with an error when the backend closes instead of answering its SSLRequest', async () => {
    // in front of the real primary: closes every connection that opens with an SSLRequest
    const port = await freePort();
    const sockets = new Set<Socket>();
    const front = createServer((s) => {
      sockets.add(s);
      s.once('data', (first: Buffer) => {
        if (first.length >= 8 && first.readInt32BE(4) === 80877103) return void s.destroy();
        const up = connect(pg.primary.port, pg.primary.host);
        sockets.add(up);
        up.write(first);
        s.pipe(up).pipe(s);
        up.on('error', () => s.destroy());
        s.on('error', () => up.destroy());
      });
    });
    await new Promise<void>((resolve) => front.listen(port, '127.0.0.1', resolve));
    try {
      edge = await startEdge([{ name: 'primary', host: '127.0.0.1', port, role: 'primary' }], 'routing_mode = "transparent"');
      const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'postgres', database: 'postgres', ssl: { ca: readFileSync(pki.ca, 'utf8'), servername: 'localhost' } });
      const started = Date.now();
      await expect(c.connect()).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await sslOf({ port: edge.rwPort, user: 'postgres' })).toEqual({ ssl: false, client_dn: null }); // plaintext clients still get through
    } finally {
      for (const s of sockets) s.destroy();
      front.close();
    }
  });
});

describe('transaction mode', () => {
  let edge: EdgeHarness;
  const tlsBackend = (serverName: string) =>
    `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\n[postgres_backends.tls]\nenabled = true\nuse_webpki_roots = false\nca_path = "${pki.ca}"\nclient_cert_path = "${pki.client.cert}"\nclient_key_path = "${pki.client.key}"\nserver_name = "${serverName}"`;

  beforeAll(async () => {
    edge = await startEdge(
      [
        { name: 'primary', host: pg.primary.host, port: pg.primary.port, role: 'primary', extra: tlsBackend('localhost') },
        { name: 'impostor', host: pg.primary.host, port: pg.primary.port, role: 'primary', shard: 'other', extra: tlsBackend('db.example.com') },
      ],
      'routing_mode = "transaction"\nconnect_timeout_seconds = 2\npool_acquire_timeout_seconds = 2\n[postgres.sharding]\nenabled = true\nmissing = "default"\nmap = { kind = "value", values = { main = "default", other = "other" } }',
      `[[users]]\nname = "app"\npassword = "tls-secret"\n[proxy.tls]\nmode = "required"\ncert_path = "${pki.server.cert}"\nkey_path = "${pki.server.key}"`,
      { until: 'checked' }, // the impostor's shard never has a usable primary
    );
  });
  afterAll(async () => edge?.stop());

  it('refuses a plaintext client before asking for any credential (proxy.tls.mode = "required")', async () => {
    const raw = await RawClient.connect(edge.rwPort);
    const messages = await raw.startup({ user: 'app', database: 'postgres' });
    expect(messages[0]?.type).toBe('ErrorResponse');
    expect(errorOf(messages)).toMatchObject({ code: '28000', severity: 'FATAL' });
    expect(messages.some((m) => m.type.startsWith('Authentication'))).toBe(false);
  });

  it('authenticates over TLS, and reaches the backend over verified TLS with a client certificate', async () => {
    const row = await sslOf({ port: edge.rwPort, user: 'app', password: 'tls-secret', ssl: { ca: readFileSync(pki.ca, 'utf8'), servername: 'localhost' } });
    expect(row).toEqual({ ssl: true, client_dn: `/CN=${POOL_USER}` });
  });

  it('finds a backend whose certificate does not match the expected host name down, and refuses its shard', async () => {
    expect(await edge.backend('primary')).toMatchObject({ healthy: true });
    expect(await edge.backend('impostor')).toMatchObject({ healthy: false });
    const ready = await edge.readyz();
    expect(ready.status).toBe(503);
    expect(ready.body.reasons.join('\n')).toMatch(/impostor[^\n]*(db\.example\.com|altnames|certificate)/i);
    const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user: 'app', password: 'tls-secret', database: 'postgres', options: '-c dbproxy.shard=other', ssl: { ca: readFileSync(pki.ca, 'utf8'), servername: 'localhost' } });
    const error = await c.connect().then(() => c.query('SELECT 1')).then(() => undefined, (err: { code?: string; message: string }) => err);
    await c.end().catch(() => undefined);
    expect(error).toMatchObject({ code: '08006', message: expect.stringContaining('"other"') });
  });

  it('verifies the backend certificate itself: a connection expecting another host name fails with DBP_ERR_PGEDGE_BACKEND_TLS', async () => {
    const impostor = edge.runtime.config.current().config.postgres_backends.find((b) => b.name === 'impostor');
    if (!impostor) throw new Error('impostor not configured');
    await expect(openBackendSocket(impostor, impostor.address, { timeoutMs: 5000 })).rejects.toMatchObject({
      code: 'DBP_ERR_PGEDGE_BACKEND_TLS',
      message: expect.stringMatching(/db\.example\.com/),
    });
  });
});
