// What one health check of a backend observes, whatever its protocol.
export type ObservedRole = 'primary' | 'replica' | 'unknown';

/** Replication as a replica reports it. */
export interface ReplicaObservation {
  /** Replication is not applying (SQL thread or IO thread stopped, WAL replay paused). */
  readonly stopped: boolean;
  readonly stoppedReason?: string;
  /** Lag the server reports itself (MySQL Seconds_Behind_Master); preferred when present. */
  readonly reportedLagSeconds: number | null;
  /** Lag from the replica alone, used when the primary's positions are unknown. */
  readonly fallbackLagSeconds: number | null;
}

export interface CheckResult {
  readonly ok: boolean;
  /** Round trip of the liveness statement (SELECT 1 / PING). */
  readonly latencyMs: number | null;
  readonly roleObserved: ObservedRole;
  /** Replication position as the server shows it: GTID set, LSN or replication offset. */
  readonly position: string | null;
  /** The position as a number that grows with every write, for lag by position timeline. */
  readonly progress: bigint | null;
  /** Null when the server does not replicate from anyone. */
  readonly replica: ReplicaObservation | null;
  /** When the answer arrived (ms since epoch). */
  readonly checkedAt: number;
  readonly error?: string;
  /** The engine the server said it is (SELECT VERSION()), for db.system.name: MySQL checks only. */
  readonly engine?: 'mysql' | 'mariadb';
}

/** A monitor connection to one backend. */
export interface BackendProbe {
  check(timeoutMs: number): Promise<CheckResult>;
  close(): void;
}

export function failedCheck(error: string): CheckResult {
  return { ok: false, latencyMs: null, roleObserved: 'unknown', position: null, progress: null, replica: null, checkedAt: Date.now(), error: error.slice(0, 1024) };
}
