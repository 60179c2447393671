// redis-edge to a TLS-only Redis: both modes connect with TLS from [redis_backends.tls] (private
// CA, client certificate, the name verified), and a wrong CA or name is a clear -ERR, not a
// plaintext connection.
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, makeTestPki, startRedis, tmpDir, type ReplicatedServers, type RedisServer, type TempDir, type TestPki } from '@dbproxy/testing';
import { startEdge, type EdgeHarness } from './harness';

jest.setTimeout(90_000);

function tlsTable(pki: TestPki, overrides: Record<string, string> = {}): string {
  const lines: Record<string, string> = {
    enabled: 'true',
    use_webpki_roots: 'false',
    ca_path: `"${pki.ca}"`,
    client_cert_path: `"${pki.client.cert}"`,
    client_key_path: `"${pki.client.key}"`,
    server_name: '"localhost"',
    ...overrides,
  };
  return `[redis_backends.tls]\n${Object.entries(lines).map(([k, v]) => `${k} = ${v}`).join('\n')}`;
}

describe('redis-edge to a TLS backend', () => {
  let dir: TempDir;
  let pki: TestPki;
  let otherCa: TestPki;
  let server: ReplicatedServers<RedisServer>;
  let tlsPort: number;
  let direct: Redis;

  beforeAll(async () => {
    dir = await tmpDir('redis-tls');
    pki = await makeTestPki(dir.path, 'dbproxy');
    otherCa = await makeTestPki(await mkdtemp(join(dir.path, 'other-')), 'dbproxy');
    tlsPort = await freePort();
    server = await startRedis({ replicas: 0, tls: { port: tlsPort, certFile: pki.server.cert, keyFile: pki.server.key, caFile: pki.ca } });
    direct = new Redis({ host: '127.0.0.1', port: server.primary.port, maxRetriesPerRequest: 0 });
  });

  afterAll(async () => {
    direct?.disconnect();
    await server?.destroy();
    await dir?.remove();
  });

  async function edgeWith(mode: 'command' | 'connection', tls: string): Promise<EdgeHarness> {
    return startEdge({ mode, backends: [{ name: 'r1', port: tlsPort, role: 'primary', extra: tls }] });
  }

  it.each(['command', 'connection'] as const)('%s mode reads and writes over TLS with a client certificate', async (mode) => {
    const edge = await edgeWith(mode, tlsTable(pki));
    try {
      const client = edge.client();
      await client.set(`tls:${mode}`, 'over-tls');
      expect(await client.get(`tls:${mode}`)).toBe('over-tls');
      expect(await direct.get(`tls:${mode}`)).toBe('over-tls');
      // The server's own view: the proxy's connection came in on the TLS port (laddr), never the plaintext one.
      const list = String(await direct.client('LIST'));
      const proxied = list.split('\n').filter((l: string) => l.includes(`laddr=127.0.0.1:${tlsPort}`));
      expect(proxied.length).toBeGreaterThan(0);
    } finally {
      await direct.del(`tls:${mode}`);
      await edge.stop();
    }
  });

  it.each([
    ['a CA that did not sign the server certificate', { ca_path: 'OTHER_CA' }, /self[- ]signed|unable to verify|UNABLE_TO_VERIFY|SELF_SIGNED/i],
    ['a name the certificate does not carry', { server_name: '"redis.elsewhere.example"' }, /ERR_TLS_CERT_ALTNAME_INVALID|altnames/],
  ])('command mode refuses %s: readiness names the TLS error, clients get a clear -ERR, nothing reaches the server', async (_what, overrides, tlsError) => {
    const tls = tlsTable(pki, Object.fromEntries(Object.entries(overrides).map(([k, v]) => [k, v === 'OTHER_CA' ? `"${otherCa.ca}"` : v])));
    const reasons = async (admin: string) => JSON.stringify(await (await fetch(`${admin}/readyz`)).json());
    const edge = await startEdge({
      mode: 'command',
      backends: [{ name: 'r1', port: tlsPort, role: 'primary', extra: tls }],
      until: { label: 'unready over the TLS error', arrived: async (admin) => tlsError.test(await reasons(admin)) },
    });
    try {
      expect((await edge.readyz()).status).toBe(503);
      const err = await edge.client().get('tls:never').catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(/^(ERR .*no usable primary backend for shard "default"|LOADING dbproxy is still reading the command table)/);
      const onTlsPort = String(await direct.client('LIST')).split('\n').filter((l: string) => l.includes(`laddr=127.0.0.1:${tlsPort}`));
      expect(onTlsPort).toEqual([]);
    } finally {
      await edge.stop();
    }
  });
});
