// PostgreSQL health check: SELECT 1, pg_is_in_recovery(), the primary's pg_current_wal_lsn() and
// a standby's replay/receive LSNs, replay pause and pg_last_xact_replay_timestamp().
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { splitAddress, type BackendTarget } from '../targets';
import { MonitorConnection } from './monitor-connection';
import { tlsOptions } from './tls';
import type { CheckResult, ReplicaObservation } from './types';

/** `X/Y` (two hex halves of a 64-bit WAL position) as a number. */
export function lsnToBigInt(lsn: string): bigint | null {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  return m ? (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`) : null;
}

// CASE keeps the recovery-only and primary-only functions from running where they would fail.
const STATE_SQL = `SELECT pg_is_in_recovery() AS recovery,
  CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_lsn()::text END AS current_lsn,
  pg_last_wal_replay_lsn()::text AS replay_lsn,
  pg_last_wal_receive_lsn()::text AS receive_lsn,
  CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END AS paused,
  EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8 AS replay_age`;

interface StateRow {
  recovery: boolean;
  current_lsn: string | null;
  replay_lsn: string | null;
  receive_lsn: string | null;
  paused: boolean;
  replay_age: number | null;
}

/** A standby's own view: WAL received but not replayed means it is behind by at least the last replayed commit's age. */
export function standbyObservation(row: StateRow): ReplicaObservation {
  const replay = row.replay_lsn ? lsnToBigInt(row.replay_lsn) : null;
  const receive = row.receive_lsn ? lsnToBigInt(row.receive_lsn) : null;
  const behindReceived = replay !== null && receive !== null && receive > replay;
  return {
    stopped: row.paused,
    ...(row.paused ? { stoppedReason: 'WAL replay is paused' } : {}),
    reportedLagSeconds: null,
    fallbackLagSeconds: behindReceived ? Math.max(0, row.replay_age ?? 0) : 0,
  };
}

export class PostgresProbe extends MonitorConnection<Client> {
  constructor(
    private readonly target: BackendTarget,
    private readonly connectAddress: string,
  ) {
    super(`postgres backend ${target.name} (${connectAddress})`);
  }

  protected async open(timeoutMs: number): Promise<Client> {
    const { host, port } = splitAddress(this.connectAddress);
    const ssl = tlsOptions(this.target.tls, host);
    const client = new Client({
      host,
      port,
      user: this.target.credentials.username,
      password: this.target.credentials.password,
      database: this.target.credentials.database,
      application_name: 'dbproxy-topology',
      connectionTimeoutMillis: timeoutMs,
      ...(ssl ? { ssl: { ...ssl } } : {}),
    });
    client.on('error', () => this.lost(client));
    try {
      await client.connect();
    } catch (err) {
      this.destroy(client);
      throw err;
    }
    return client;
  }

  protected destroy(client: Client): void {
    client.connection.stream.destroy();
  }

  protected async inspect(client: Client): Promise<CheckResult> {
    const started = performance.now();
    await client.query('SELECT 1');
    const latencyMs = performance.now() - started;
    const row = (await client.query<StateRow>(STATE_SQL)).rows[0];
    if (!row) throw new Error('no row from the state query');
    const position = row.recovery ? row.replay_lsn : row.current_lsn;
    return {
      ok: true,
      latencyMs,
      roleObserved: row.recovery ? 'replica' : 'primary',
      position,
      progress: position ? lsnToBigInt(position) : null,
      replica: row.recovery ? standbyObservation(row) : null,
      checkedAt: Date.now(),
    };
  }
}
