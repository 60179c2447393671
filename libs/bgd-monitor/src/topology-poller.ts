// Polls mysql.rds_topology on one server: the existence check until the table has been seen, then
// metadata fetches; ER_NO_SUCH_TABLE sends it back to the existence check. One monitor connection
// per probe target, reopened after an error.
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createConnection, type Connection, type FieldPacket, type RowDataPacket } from 'mysql2/promise';
import { errorMessage } from '@dbproxy/util';
import type { BackendTlsSettings } from './deployment-settings';
import type { PollOutcome, TopologyRow } from './topology-observation';

/** Where a poll goes: one coherent host (an IP once the green writer is resolved), port and TLS tuple. */
export interface ProbeTarget {
  readonly host: string;
  readonly port: number;
  /** The name TLS verifies against (the server's hostname when `host` is an IP). */
  readonly serverName: string;
  readonly tls: BackendTlsSettings;
  readonly username: string;
  readonly password: string;
}

const ER_NO_SUCH_TABLE = 1146;
const EXISTS_SQL = "SELECT 1 AS found FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME = 'rds_topology'";
const FETCH_SQL = 'SELECT id, endpoint, port, role, status, version FROM mysql.rds_topology';

export const targetKey = (t: ProbeTarget): string => `${t.host}:${t.port}:${t.tls.enabled ? 'tls' : 'plain'}`;

function sslOf(t: ProbeTarget): Record<string, unknown> | undefined {
  if (!t.tls.enabled) return undefined;
  const servername = t.tls.server_name ?? (isIP(t.serverName) ? undefined : t.serverName);
  return { rejectUnauthorized: true, ...(t.tls.ca_path ? { ca: [readFileSync(t.tls.ca_path, 'utf8')] } : {}), ...(servername ? { servername } : {}) };
}

const cell = (v: unknown): string | null => (v === null || v === undefined ? null : Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

function toRow(r: RowDataPacket): TopologyRow {
  const port = r['port'];
  return { id: cell(r['id']), endpoint: cell(r['endpoint']), port: port === null || port === undefined ? null : Number(port), role: cell(r['role']), status: cell(r['status']), version: cell(r['version']) };
}

export class TopologyPoller {
  private connection: { key: string; conn: Connection } | undefined;
  /** After the table has been observed, polls go straight to the fetch. */
  private tableSeen = false;

  /** Forget the table: the next poll starts with the existence check (after a refresh or a restart of the machine). */
  resetToTableCheck(): void {
    this.tableSeen = false;
  }

  get checkingTable(): boolean {
    return !this.tableSeen;
  }

  async poll(target: ProbeTarget, timeoutMs: number): Promise<PollOutcome & { readonly connectFailed?: boolean }> {
    let conn: Connection;
    try {
      conn = await this.open(target, timeoutMs);
    } catch (err) {
      return { kind: 'query-error', detail: `connect ${target.host}:${target.port}: ${errorMessage(err)}`, connectFailed: true };
    }
    try {
      if (!this.tableSeen) {
        const [found] = await conn.query<RowDataPacket[]>({ sql: EXISTS_SQL, timeout: timeoutMs });
        if (found.length === 0) return { kind: 'absent', detail: 'mysql.rds_topology does not exist' };
        this.tableSeen = true;
      }
      const [rows, fields] = (await conn.query<RowDataPacket[]>({ sql: FETCH_SQL, timeout: timeoutMs })) as [RowDataPacket[], FieldPacket[]];
      if (rows.length === 0) return { kind: 'empty' };
      return { kind: 'rows', rows: rows.map(toRow), columns: fields.map((f) => f.name) };
    } catch (err) {
      if ((err as { errno?: number }).errno === ER_NO_SUCH_TABLE) {
        this.tableSeen = false;
        return { kind: 'absent', detail: 'ER_NO_SUCH_TABLE' };
      }
      this.close();
      return { kind: 'query-error', detail: errorMessage(err) };
    }
  }

  close(): void {
    this.connection?.conn.destroy();
    this.connection = undefined;
  }

  private async open(target: ProbeTarget, timeoutMs: number): Promise<Connection> {
    const key = targetKey(target);
    if (this.connection?.key === key) return this.connection.conn;
    this.close();
    const ssl = sslOf(target);
    const conn = await createConnection({
      host: target.host,
      port: target.port,
      user: target.username,
      password: target.password,
      connectTimeout: timeoutMs,
      connectAttributes: { program_name: 'dbproxy-bgd-monitor' },
      ...(ssl ? { ssl } : {}),
    });
    conn.on('error', () => {
      if (this.connection?.conn === conn) this.connection = undefined;
    });
    this.connection = { key, conn };
    return conn;
  }
}
