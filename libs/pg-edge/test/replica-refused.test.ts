// A replica that refuses connections, before topology marks it down: node-postgres read loops on
// the read-only listener see no error in either mode. The connect failed before anything was sent,
// so the read goes to the other replica, then (fallback_to_primary) to the primary; with nothing
// left the client gets 08006 (connection failure), never 53300 (too many connections). Each backend
// is reached through a TCP relay whose close refuses new connections at once.
import { Client, type DatabaseError } from 'pg';
import { startPostgres, type PostgresServer, type ReplicatedServers } from '@dbproxy/testing';
import { POOL_PASSWORD, POOL_USER, requirePoolPassword } from './backend-auth';
import { startEdge, type EdgeHarness } from './harness';
import { HeldRelay } from './held-relay';

jest.setTimeout(90_000);

const LOOPS = 4;
const LOOP_MS = 1500;

let pg: ReplicatedServers<PostgresServer>;

beforeAll(async () => {
  pg = await startPostgres({ replicas: 2 });
  await requirePoolPassword(pg);
});

afterAll(async () => {
  await pg?.destroy();
});

interface LoopResult {
  readonly reads: number;
  readonly errors: string[];
  readonly fromReplica: number;
}

function describeMode(mode: 'transaction' | 'transparent'): void {
  describe(`${mode} mode`, () => {
    let edge: EdgeHarness;
    let relays: HeldRelay[];
    const user = mode === 'transaction' ? 'app' : 'postgres';
    const password = mode === 'transaction' ? 'app-secret' : undefined;
    const client = () => new Client({ host: '127.0.0.1', port: edge.roPort, user, password, database: 'postgres' });

    /** Clients reading for LOOP_MS: transaction mode on connected clients, transparent mode one session per read (each is placed on a backend). */
    async function readLoops(): Promise<LoopResult> {
      const errors: string[] = [];
      let reads = 0;
      let fromReplica = 0;
      const ends = Date.now() + LOOP_MS;
      const read = async (c: Client) => {
        const row = (await c.query('SELECT pg_is_in_recovery() AS replica')).rows[0] as { replica: boolean };
        reads++;
        if (row.replica) fromReplica++;
      };
      const loop = async () => {
        const held = mode === 'transaction' ? client() : undefined;
        await held?.connect();
        while (Date.now() < ends) {
          const c = held ?? client();
          try {
            if (!held) await c.connect();
            await read(c);
          } catch (err) {
            errors.push(`${(err as DatabaseError).code ?? ''} ${(err as Error).message}`);
          } finally {
            if (!held) await c.end().catch(() => undefined);
          }
        }
        await held?.end();
      };
      await Promise.all(Array.from({ length: LOOPS }, loop));
      return { reads, errors, fromReplica };
    }

    const retries = async (to: string) => Number((await edge.metrics()).match(new RegExp(`dbproxy_pg_backend_connect_retries_total\\{[^}]*mode="${mode}"[^}]*to="${to}"[^}]*\\} (\\d+)`))?.[1] ?? 0);

    beforeAll(async () => {
      relays = await Promise.all([pg.primary, ...pg.replicas].map((s) => HeldRelay.start(s.host, s.port)));
      const extra = mode === 'transaction' ? `username = "${POOL_USER}"\npassword = "${POOL_PASSWORD}"\ndatabase = "postgres"` : '';
      const [primary, replica1, replica2] = relays as [HeldRelay, HeldRelay, HeldRelay];
      edge = await startEdge(
        [
          { name: 'primary', host: '127.0.0.1', port: primary.port, role: 'primary', extra },
          { name: 'replica1', host: '127.0.0.1', port: replica1.port, role: 'replica', extra },
          { name: 'replica2', host: '127.0.0.1', port: replica2.port, role: 'replica', extra },
        ],
        `routing_mode = "${mode}"\nfallback_to_primary = true\npool_acquire_timeout_seconds = 5`,
        mode === 'transaction' ? '[[users]]\nname = "app"\npassword = "app-secret"' : '',
      );
      const warm = await readLoops();
      expect(warm.errors).toEqual([]);
    });

    afterAll(async () => {
      await edge?.stop();
      await Promise.all(relays.map((r) => r.close().catch(() => undefined)));
    });

    it('reads on from the other replica while topology has not yet marked the refusing one down', async () => {
      await relays[1]?.close();
      const result = await readLoops();
      expect(result.errors).toEqual([]);
      expect(result.reads).toBeGreaterThan(LOOPS);
      expect(result.fromReplica).toBe(result.reads);
      expect(await retries('replica')).toBeGreaterThan(0);
      await edge.waitForBackend('replica1', (b) => b.healthy === false, 'replica1 marked down');
    });

    it('falls back to the primary when the last usable replica refuses too (fallback_to_primary)', async () => {
      await relays[2]?.close();
      const result = await readLoops();
      expect(result.errors).toEqual([]);
      expect(result.reads).toBeGreaterThan(LOOPS);
      expect(await retries('primary')).toBeGreaterThan(0);
      await edge.waitForBackend('replica2', (b) => b.healthy === false, 'replica2 marked down');
    });

    it('answers 08006, not 53300, when no backend can be connected to, without the OS error or the address', async () => {
      await relays[0]?.close();
      const c = client();
      const failure = mode === 'transaction' ? c.connect().then(() => c.query('SELECT 1')) : c.connect();
      const err = (await failure.then(() => null, (e: unknown) => e)) as DatabaseError;
      expect(err).toMatchObject({ code: '08006', message: 'could not connect to backend primary: it is unavailable (details in the edge log)' });
      expect(err.message).not.toMatch(/ECONN|refused/i);
      expect(err.message).not.toContain(`:${relays[0]?.port ?? 0}`);
      await c.end().catch(() => undefined);
    });
  });
}

describeMode('transaction');
describeMode('transparent');
