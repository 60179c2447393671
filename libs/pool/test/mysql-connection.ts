// A ConnectionFactory over mysql2 for the integration tests, shaped like mysql-edge's pool:
// reset is COM_RESET_CONNECTION, liveness comes from the connection's error/end events.
import { createConnection, type Connection } from 'mysql2';
import type { Connection as PromiseConnection } from 'mysql2/promise';
import type { ConnectionFactory } from '../src';

export interface MysqlPooled {
  readonly raw: Connection;
  readonly sql: PromiseConnection;
  readonly threadId: number;
  /** Set when the server ended the session (KILL, socket closed). */
  dead: boolean;
}

export const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root' } as const;

export class MysqlConnectionFactory implements ConnectionFactory<MysqlPooled> {
  /** `database` tags the pool's sessions: information_schema.processlist shows it as DB. */
  constructor(readonly database: string) {}

  create(signal: AbortSignal): Promise<MysqlPooled> {
    return new Promise((resolve, reject) => {
      const raw = createConnection({ ...MARIADB, database: this.database, connectTimeout: 5_000 });
      const pooled = { raw, sql: raw.promise(), threadId: 0, dead: false };
      const onAbort = () => {
        raw.destroy();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      raw.on('error', () => {
        pooled.dead = true;
      });
      raw.on('end', () => {
        pooled.dead = true;
      });
      raw.connect((err) => {
        signal.removeEventListener('abort', onAbort);
        if (err) {
          raw.destroy();
          reject(err);
          return;
        }
        pooled.threadId = raw.threadId;
        resolve(pooled);
      });
    });
  }

  /** COM_RESET_CONNECTION: rolls back, drops temporary tables, user variables and prepared statements. */
  reset(conn: MysqlPooled): Promise<void> {
    return conn.sql.reset();
  }

  destroy(conn: MysqlPooled): Promise<void> {
    if (conn.dead) {
      conn.raw.destroy();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      conn.raw.end(() => {
        conn.raw.destroy();
        resolve();
      });
    });
  }

  isAlive(conn: MysqlPooled): boolean {
    return !conn.dead;
  }
}

/** A connection outside the pool, to look at the server. */
export async function mysqlMonitor(): Promise<PromiseConnection> {
  const raw = createConnection({ ...MARIADB });
  return raw.promise();
}

/** Server-side sessions whose current database is `database`. */
export async function mysqlSessions(monitor: PromiseConnection, database: string): Promise<number[]> {
  const [rows] = await monitor.query('SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? ORDER BY ID', [database]);
  return (rows as { id: number }[]).map((r) => Number(r.id));
}
