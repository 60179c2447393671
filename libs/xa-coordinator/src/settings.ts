// The coordinator's settings from [mysql.xa] (the xa table of [mysql]) and [mysql]'s connect timeout.
import { resolve } from 'node:path';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export interface XaSettings {
  readonly enabled: boolean;
  /** Absolute path of the journal file (its lock is `<path>.lock`). */
  readonly journalPath: string;
  /** Phase one (XA START … XA PREPARE on every participant) must end within this; else rollback. */
  readonly decisionTimeoutMs: number;
  readonly recoveryIntervalMs: number;
  readonly groupCommit: boolean;
  readonly participantConcurrency: number;
  readonly maxInFlight: number;
  readonly connectTimeoutMs: number;
}

export function xaSettings(config: DeepReadonly<DbproxyConfig>): XaSettings {
  const xa = config.mysql.xa;
  return {
    enabled: xa.enabled,
    journalPath: resolve(xa.journal_path),
    decisionTimeoutMs: xa.decision_timeout_seconds * 1000,
    recoveryIntervalMs: xa.recovery_interval_seconds * 1000,
    groupCommit: xa.group_commit,
    participantConcurrency: xa.participant_concurrency,
    maxInFlight: xa.max_in_flight,
    connectTimeoutMs: config.mysql.connect_timeout_seconds * 1000,
  };
}
