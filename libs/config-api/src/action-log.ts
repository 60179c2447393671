// The operator action log (GET /v1/actions): who did what to which session, edge or backend, and
// how it went. Bounded (config_api.action_log_limit, oldest dropped); every entry is also logged.
import type { Logger } from '@dbproxy/observability';

export type ActionKind = 'kill' | 'pause' | 'resume' | 'drain' | 'undrain';

export interface ActionEntry {
  readonly at: string;
  /** The bearer token's name. */
  readonly token: string;
  readonly action: ActionKind;
  /** Session id, edge instance id or backend name. */
  readonly target: string;
  /** `ok`, or what went wrong (e.g. `not_found`, `timeout`). */
  readonly outcome: string;
}

export class ActionLog {
  private readonly entries: ActionEntry[] = [];

  constructor(
    private readonly limit: () => number,
    private readonly logger: Logger,
  ) {}

  add(entry: ActionEntry): void {
    this.entries.push(entry);
    const excess = this.entries.length - this.limit();
    if (excess > 0) this.entries.splice(0, excess);
    this.logger.info({ token: entry.token, action: entry.action, target: entry.target, outcome: entry.outcome }, `operator action ${entry.action}`);
  }

  /** Oldest first, newest last. */
  list(): readonly ActionEntry[] {
    return this.entries;
  }
}

/** Records one operator action, stamped now, in the log and the service log. */
export function recordAction(log: ActionLog, token: string, action: ActionKind, target: string, outcome: string): ActionEntry {
  const entry: ActionEntry = { at: new Date().toISOString(), token, action, target, outcome };
  log.add(entry);
  return entry;
}
