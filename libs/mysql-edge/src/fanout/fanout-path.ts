// The contract between a session's fanout hooks and the way copies reach their targets. The
// best-effort path copies after the statement succeeded on its own shard, each target on its own,
// partial completion possible (spec 000's failure model). The XA path of mode = "xa"
// (xa-path.ts) registers beside it in FanoutCoordinator (register()); since XA makes the own shard
// a participant, its statements never run on the exchange: session-xa.ts (the pre-dispatch hook
// in statement-commands.ts) hands them to XaFanoutPath.execute() instead, and its run() is only
// the interface's slot.
import type { CopyStatement } from './copy-statement';
import type { FanoutRule } from './fanout-rules';

/** `ok` sent and answered OK; `failed` an error (server, connection, no primary); `timeout` not done within timeout_seconds; `skipped` not sent after an earlier copy of the same batch to that target failed; `discarded` never sent (its transaction rolled back). */
export type CopyResult = 'ok' | 'failed' | 'timeout' | 'skipped' | 'discarded';

export const COPY_RESULTS: readonly CopyResult[] = ['ok', 'failed', 'timeout', 'skipped', 'discarded'];

/** A copy that did not succeed, for the client's warning and the log. */
export interface CopyFailure {
  readonly fanout: string;
  readonly shard: string;
  /** The target primary's backend name; null when none was usable. */
  readonly backend: string | null;
  readonly result: Exclude<CopyResult, 'ok'>;
  /** The backend's errno (or the edge's own, e.g. 1429 for no connection). */
  readonly code: number;
  readonly message: string;
}

/** The copies of one statement, or of one committed transaction in statement order. */
export interface FanoutBatch {
  readonly rule: FanoutRule;
  readonly statements: readonly CopyStatement[];
  /** The shard the statements ran on: a target equal to it gets no copy. */
  readonly ownShard: string;
  /** The client's capability profile (the pools its connections come from). */
  readonly profile: number;
  /** The session, for the log. */
  readonly session: number;
}

export interface FanoutPath {
  readonly mode: FanoutRule['mode'];
  /** Runs the batch; resolves (never rejects) with the copies that did not succeed, within the rule's timeout. */
  run(batch: FanoutBatch): Promise<CopyFailure[]>;
}
