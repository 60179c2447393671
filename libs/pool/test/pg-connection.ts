// A ConnectionFactory over the `pg` client for the integration tests, shaped like pg-edge's
// transaction pool: reset is ROLLBACK then DISCARD ALL, liveness comes from the socket's events.
import { Client } from 'pg';
import type { ConnectionFactory } from '../src';

export interface PgPooled {
  readonly client: Client;
  readonly pid: number;
  /** Set when the server ended the session (FATAL error, socket closed). */
  dead: boolean;
}

export const PG = { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' } as const;

export class PgConnectionFactory implements ConnectionFactory<PgPooled> {
  constructor(readonly applicationName: string) {}

  async create(signal: AbortSignal): Promise<PgPooled> {
    const client = new Client({ ...PG, application_name: this.applicationName });
    const pooled: { client: Client; pid: number; dead: boolean } = { client, pid: 0, dead: false };
    const markDead = () => {
      pooled.dead = true;
    };
    // A FATAL error on an idle connection (pg_terminate_backend) arrives as an 'error' event.
    client.on('error', markDead);
    client.on('end', markDead);
    const onAbort = () => void client.end().catch(markDead);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await client.connect();
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      pooled.pid = rows[0].pid;
      return pooled;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Two statements, not one "ROLLBACK; DISCARD ALL" query: a multi-statement simple query runs
   * in an implicit transaction block, where DISCARD ALL is refused.
   */
  async reset(conn: PgPooled): Promise<void> {
    await conn.client.query('ROLLBACK');
    await conn.client.query('DISCARD ALL');
  }

  destroy(conn: PgPooled): Promise<void> {
    return conn.client.end().catch(() => undefined);
  }

  isAlive(conn: PgPooled): boolean {
    return !conn.dead;
  }
}

/** A connection outside the pool, to look at the server. */
export async function pgMonitor(): Promise<Client> {
  const client = new Client({ ...PG, application_name: 'dbproxy-pool-test-monitor' });
  await client.connect();
  return client;
}

/** Server-side sessions opened under `applicationName`. */
export async function pgSessions(monitor: Client, applicationName: string): Promise<number[]> {
  const { rows } = await monitor.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid', [
    applicationName,
  ]);
  return rows.map((r) => r.pid);
}
