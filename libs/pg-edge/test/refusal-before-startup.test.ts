// A connection refused before its startup (no usable backend yet, max_connections) answers the
// SSLRequest first (`N`, or TLS when proxy.tls is configured) and sends the FATAL after the
// StartupMessage, where psql and node-postgres print it; an ErrorResponse as the answer to the
// SSLRequest would read "server sent an error response during SSL exchange" and hide the reason.
import { connect as tcpConnect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { processEnvironment } from '@dbproxy/config';
import { freePort, tmpDir, type TempDir } from '@dbproxy/testing';
import { makePki, type Pki } from './certificates';
import { startEdge, type EdgeHarness } from './harness';
import { run } from './processes';

jest.setTimeout(60_000);

let dir: TempDir;
let pki: Pki;

beforeAll(async () => {
  dir = await tmpDir('pg-edge-refusal');
  pki = await makePki(dir.path, 'app');
});

afterAll(async () => {
  await dir?.remove();
});

/** psql's exit status and what it printed, connecting with `sslmode`. */
async function psql(port: number, sslmode: string, user: string): Promise<{ status: number | null; stderr: string }> {
  const env = { ...processEnvironment(), PGSSLMODE: sslmode, PGCONNECT_TIMEOUT: '5', PGPASSWORD: 'app-secret' };
  const result = await run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', user, '-d', 'postgres', '-X', '-c', 'SELECT 1'], { env, timeoutMs: 20_000 });
  return { status: result.status, stderr: result.stderr };
}

const admitted = async (edge: EdgeHarness) => Number((await edge.metrics()).match(/dbproxy_connections_accepted_total\{[^}]*listener="read_write"[^}]*\} (\d+)/)?.[1] ?? 0);

/** `slots` silent connections the edge admitted (earlier tests' connections may still be closing: tried again until they are gone). */
async function holdEverySlot(edge: EdgeHarness, slots: number): Promise<Socket[]> {
  for (let attempt = 0; ; attempt++) {
    const before = await admitted(edge);
    const holders = Array.from({ length: slots }, () => tcpConnect({ host: '127.0.0.1', port: edge.rwPort }).on('error', () => undefined));
    await Promise.all(holders.map((h) => new Promise((resolve) => h.once('connect', resolve))));
    await new Promise((resolve) => setTimeout(resolve, 200));
    if ((await admitted(edge)) - before === slots) return holders;
    for (const h of holders) h.destroy();
    if (attempt === 10) throw new Error(`the edge did not admit ${slots} connections`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function describeMode(mode: 'transparent' | 'transaction'): void {
  describe(`${mode} mode`, () => {
    let edge: EdgeHarness;
    const user = mode === 'transaction' ? 'app' : 'postgres';
    const tls = () => ({ ca: readFileSync(pki.ca, 'utf8'), servername: 'localhost' });

    beforeAll(async () => {
      // the only primary is a closed port: topology never finds it up, so no session can be placed
      const closed = await freePort();
      edge = await startEdge(
        [{ name: 'primary', host: '127.0.0.1', port: closed, role: 'primary' }],
        `routing_mode = "${mode}"\nmax_connections = 2`,
        `${mode === 'transaction' ? '[[users]]\nname = "app"\npassword = "app-secret"\n' : ''}[proxy.tls]\nmode = "optional"\ncert_path = "${pki.server.cert}"\nkey_path = "${pki.server.key}"`,
        { until: 'checked' },
      );
    });

    afterAll(async () => {
      await edge?.stop();
    });

    it.each(['prefer', 'require', 'disable'])('psql (sslmode=%s) prints the real reason, not an error during the SSL exchange', async (sslmode) => {
      const result = await psql(edge.rwPort, sslmode, user);
      expect(result.status).toBe(2);
      expect(result.stderr).not.toMatch(/SSL exchange|does not support SSL/);
      expect(result.stderr).toMatch(/FATAL: {2}.*(no usable primary backend|could not connect|no connection)/);
    });

    it.each([
      ['with TLS', true],
      ['without TLS', false],
    ])('node-postgres %s gets the FATAL with its SQLSTATE', async (_label, secure) => {
      const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user, password: 'app-secret', database: 'postgres', ssl: secure ? tls() : false });
      await expect(c.connect()).rejects.toMatchObject({ code: expect.stringMatching(/^08/), severity: 'FATAL' });
    });

    it('answers the SSLRequest of a connection refused at max_connections, then says so (psql sslmode=require)', async () => {
      const holders = await holdEverySlot(edge, 2);
      try {
        const result = await psql(edge.rwPort, 'require', user);
        expect(result.stderr).toMatch(/FATAL: {2}sorry, too many clients already \(max_connections = 2\)/);
        const c = new Client({ host: '127.0.0.1', port: edge.rwPort, user, password: 'app-secret', database: 'postgres', ssl: tls() });
        await expect(c.connect()).rejects.toMatchObject({ code: '53300' });
      } finally {
        for (const h of holders) h.destroy();
      }
    });
  });
}

describeMode('transparent');
describeMode('transaction');
