// The operator action log of GET /v1/actions: who did what to which session, edge or backend,
// with its outcome; bounded, newest last, kept by this config-api instance.
import type { Caller } from './auth';

export type ActionKind = 'kill' | 'pause' | 'resume' | 'drain' | 'undrain';

export interface ActionRecord {
  readonly at: string;
  readonly token: string;
  readonly action: ActionKind;
  readonly target: string;
  /** `ok`, or the error the action met. */
  readonly outcome: string;
}

export const ACTION_LOG_LIMIT = 1000;

export class ActionLog {
  private readonly records: ActionRecord[] = [];

  constructor(private readonly limit = ACTION_LOG_LIMIT) {}

  add(record: ActionRecord): void {
    this.records.push(record);
    if (this.records.length > this.limit) this.records.splice(0, this.records.length - this.limit);
  }

  list(): readonly ActionRecord[] {
    return this.records;
  }
}

/** Appends one action by `caller` to `log` and returns the record. */
export function recordAction(log: ActionLog, caller: Caller | undefined, action: ActionKind, target: string, outcome: string): ActionRecord {
  const record: ActionRecord = { at: new Date().toISOString(), token: caller?.name ?? 'unknown', action, target, outcome };
  log.add(record);
  return record;
}
