// Reading replication status: GTID counts, MySQL/MariaDB status rows, PostgreSQL LSNs and standby state, Redis INFO.
import { mariadbProgress, mysqlProgress, replicaFromStatus } from './mysql-probe';
import { lsnToBigInt, standbyObservation } from './postgres-probe';
import { parseInfo, replicaFromInfo } from './redis-probe';

describe('MySQL/MariaDB replication status', () => {
  it('turns GTID positions into a transaction count', () => {
    expect(mariadbProgress('')).toBe(0n);
    expect(mariadbProgress('0-1-42')).toBe(42n);
    expect(mariadbProgress('0-1-42,1-2-8')).toBe(50n);
    expect(mariadbProgress('garbage')).toBeNull();
    expect(mysqlProgress('')).toBe(0n);
    expect(mysqlProgress('3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:11-18,\n4E11FA47-71CA-11E1-9E33-C80AA9429562:1-3')).toBe(16n);
    expect(mysqlProgress('3E11FA47-71CA-11E1-9E33-C80AA9429562:7')).toBe(1n);
  });

  it('reads MariaDB (Slave_*) and MySQL 8 (Replica_*) status rows', () => {
    expect(replicaFromStatus({ Slave_IO_Running: 'Yes', Slave_SQL_Running: 'Yes', Seconds_Behind_Master: 0 })).toEqual({ stopped: false, reportedLagSeconds: 0, fallbackLagSeconds: null });
    expect(replicaFromStatus({ Replica_IO_Running: 'Yes', Replica_SQL_Running: 'Yes', Seconds_Behind_Source: 12 })).toMatchObject({ stopped: false, reportedLagSeconds: 12 });
    // IO thread reconnecting to a primary that is down: not stopped, lag unknown to the server
    expect(replicaFromStatus({ Slave_IO_Running: 'Connecting', Slave_SQL_Running: 'Yes', Seconds_Behind_Master: null })).toMatchObject({ stopped: false, reportedLagSeconds: null });
    expect(replicaFromStatus({ Slave_IO_Running: 'No', Slave_SQL_Running: 'No', Seconds_Behind_Master: null, Last_SQL_Error: '' })).toEqual({
      stopped: true,
      stoppedReason: 'replication stopped (IO thread No, SQL thread No)',
      reportedLagSeconds: null,
      fallbackLagSeconds: null,
    });
    expect(replicaFromStatus({ Slave_IO_Running: 'Yes', Slave_SQL_Running: 'No', Last_SQL_Error: "Duplicate entry '1'" }).stoppedReason).toBe(
      "replication stopped (IO thread Yes, SQL thread No): Duplicate entry '1'",
    );
  });
});

describe('PostgreSQL standby status', () => {
  it('reads LSNs as 64-bit numbers', () => {
    expect(lsnToBigInt('0/800000')).toBe(0x800000n);
    expect(lsnToBigInt('1/0')).toBe(1n << 32n);
    expect(lsnToBigInt('FFFFFFFF/FFFFFFFF')).toBe((1n << 64n) - 1n);
    expect(lsnToBigInt('nonsense')).toBeNull();
  });

  it('treats paused replay as stopped, and WAL received but not replayed as behind by the last replayed commit age', () => {
    const row = { recovery: true, current_lsn: null, replay_lsn: '0/800000', receive_lsn: '0/800000', paused: false, replay_age: 120 };
    expect(standbyObservation(row)).toEqual({ stopped: false, reportedLagSeconds: null, fallbackLagSeconds: 0 });
    expect(standbyObservation({ ...row, receive_lsn: '0/900000' })).toMatchObject({ fallbackLagSeconds: 120 });
    expect(standbyObservation({ ...row, paused: true })).toMatchObject({ stopped: true, stoppedReason: 'WAL replay is paused' });
  });
});

describe('Redis replication info', () => {
  it('parses INFO fields and the replica link', () => {
    const info = parseInfo('# Replication\r\nrole:slave\r\nmaster_link_status:up\r\nslave_repl_offset:1234\r\n');
    expect(info.get('slave_repl_offset')).toBe('1234');
    expect(replicaFromInfo(info)).toEqual({ stopped: false, reportedLagSeconds: null, fallbackLagSeconds: 0 });
    const down = parseInfo('role:slave\nmaster_link_status:down\nmaster_link_down_since_seconds:42\n');
    expect(replicaFromInfo(down).fallbackLagSeconds).toBe(42);
    expect(replicaFromInfo(parseInfo('master_link_status:down\nmaster_link_down_since_seconds:-1\n')).fallbackLagSeconds).toBeNull();
  });
});
