// MySQL/MariaDB health check: SELECT 1, role from @@read_only, replication from SHOW SLAVE STATUS
// (SHOW REPLICA STATUS on MySQL 8) and the GTID position.
import { performance } from 'node:perf_hooks';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { splitAddress, type BackendTarget } from '../targets';
import { MonitorConnection } from './monitor-connection';
import { tlsOptions } from './tls';
import type { CheckResult, ReplicaObservation } from './types';

type Flavor = 'mariadb' | 'mysql';
interface MysqlConnection {
  readonly connection: Connection;
  readonly flavor: Flavor;
}

type Row = Record<string, unknown>;

/** ER_SPECIFIC_ACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR, ER_DBACCESS_DENIED_ERROR: the account lacks a privilege. */
const PRIVILEGE_ERRNOS = new Set([1227, 1142, 1044]);

/** A count that grows with each transaction: the sum of MariaDB GTID sequence numbers (one per domain). */
export function mariadbProgress(gtidPos: string): bigint | null {
  const parts = gtidPos.split(',').map((g) => g.trim()).filter(Boolean);
  let total = 0n;
  for (const part of parts) {
    const seq = /^\d+-\d+-(\d+)$/.exec(part)?.[1];
    if (seq === undefined) return null;
    total += BigInt(seq);
  }
  return total;
}

/** The number of transactions a MySQL GTID set holds (`uuid:1-5:7,uuid2:1-3` → 9). */
export function mysqlProgress(gtidSet: string): bigint | null {
  let total = 0n;
  for (const member of gtidSet.replace(/\s+/g, '').split(',').filter(Boolean)) {
    const [, ...intervals] = member.split(':');
    for (const interval of intervals) {
      if (!/^\d+(-\d+)?$/.test(interval)) continue; // a tag (MySQL 8.3 tagged GTIDs)
      const [first, last = first] = interval.split('-');
      total += BigInt(last as string) - BigInt(first as string) + 1n;
    }
  }
  return total;
}

const text = (row: Row, ...keys: string[]): string | undefined => {
  for (const key of keys) if (row[key] !== undefined && row[key] !== null) return String(row[key]);
  return undefined;
};

/** What a replica status row (either naming) says about replication. */
export function replicaFromStatus(row: Row): ReplicaObservation {
  const io = text(row, 'Slave_IO_Running', 'Replica_IO_Running') ?? 'No';
  const sql = text(row, 'Slave_SQL_Running', 'Replica_SQL_Running') ?? 'No';
  const behind = text(row, 'Seconds_Behind_Master', 'Seconds_Behind_Source');
  const stopped = sql !== 'Yes' || io === 'No';
  const error = text(row, 'Last_SQL_Error') || text(row, 'Last_IO_Error');
  return {
    stopped,
    ...(stopped ? { stoppedReason: `replication stopped (IO thread ${io}, SQL thread ${sql})${error ? `: ${error}` : ''}` } : {}),
    reportedLagSeconds: behind === undefined ? null : Number(behind),
    fallbackLagSeconds: null,
  };
}

export class MysqlProbe extends MonitorConnection<MysqlConnection> {
  constructor(
    private readonly target: BackendTarget,
    private readonly connectAddress: string,
  ) {
    super(`mysql backend ${target.name} (${connectAddress})`);
  }

  protected async open(timeoutMs: number): Promise<MysqlConnection> {
    const { host, port } = splitAddress(this.connectAddress);
    const ssl = tlsOptions(this.target.tls, host);
    const connection = await createConnection({
      host,
      port,
      user: this.target.credentials.username,
      password: this.target.credentials.password,
      connectTimeout: timeoutMs,
      connectAttributes: { program_name: 'dbproxy-topology' },
      ...(ssl ? { ssl: { ...ssl } } : {}),
    });
    let opened: MysqlConnection | undefined;
    connection.on('error', () => opened && this.lost(opened));
    try {
      const [rows] = await connection.query<RowDataPacket[]>('SELECT VERSION() AS version');
      opened = { connection, flavor: String(rows[0]?.['version'] ?? '').includes('MariaDB') ? 'mariadb' : 'mysql' };
    } catch (err) {
      connection.destroy();
      throw err;
    }
    return opened;
  }

  protected destroy(c: MysqlConnection): void {
    c.connection.destroy();
  }

  protected async inspect({ connection, flavor }: MysqlConnection): Promise<CheckResult> {
    const started = performance.now();
    await connection.query('SELECT 1');
    const latencyMs = performance.now() - started;
    const gtid = flavor === 'mariadb' ? '@@gtid_current_pos' : '@@gtid_executed';
    const [[state]] = await connection.query<RowDataPacket[]>(`SELECT @@read_only AS read_only, ${gtid} AS gtid`);
    const status = await this.replicaStatusRow(connection, flavor);
    const position = state?.['gtid'] === null || state?.['gtid'] === undefined ? null : String(state['gtid']);
    const progress = position === null ? null : flavor === 'mariadb' ? mariadbProgress(position) : mysqlProgress(position);
    return {
      ok: true,
      latencyMs,
      roleObserved: Number(state?.['read_only']) === 1 ? 'replica' : 'primary',
      position,
      progress,
      replica: status === 'unknown' ? this.unknownReplication() : status ? replicaFromStatus(status) : null,
      checkedAt: Date.now(),
      engine: flavor,
    };
  }

  /**
   * The replica status row, none, or 'unknown' when the account may not read it (1227: SLAVE
   * MONITOR / REPLICATION CLIENT missing; 1142/1044/1045-class refusals alike): a primary needs no
   * replication status, so that is no failed check.
   */
  private async replicaStatusRow(connection: Connection, flavor: Flavor): Promise<Row | undefined | 'unknown'> {
    try {
      return (await this.replicaStatus(connection, flavor))[0];
    } catch (err) {
      if (PRIVILEGE_ERRNOS.has(Number((err as { errno?: unknown }).errno))) return 'unknown';
      throw err;
    }
  }

  /** A configured primary: not replicating. A replica: replicating with an unknown lag (measured by position, else lagging). */
  private unknownReplication(): ReplicaObservation | null {
    if (this.target.role === 'primary') return null;
    return { stopped: false, reportedLagSeconds: null, fallbackLagSeconds: null };
  }

  private async replicaStatus(connection: Connection, flavor: Flavor): Promise<Row[]> {
    if (flavor === 'mariadb') return (await connection.query<RowDataPacket[]>('SHOW SLAVE STATUS'))[0];
    try {
      return (await connection.query<RowDataPacket[]>('SHOW REPLICA STATUS'))[0];
    } catch {
      return (await connection.query<RowDataPacket[]>('SHOW SLAVE STATUS'))[0]; // MySQL before 8.0.22
    }
  }
}
