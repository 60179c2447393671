// A monitor connection: opened on first use, reused by every check, dropped (hard) on any error
// or timeout and reopened by the next check. Monitor connections are not pool connections.
import { errorCode, errorMessage } from '@dbproxy/util';
import { TopologyErrors } from '../errors';
import { failedCheck, type BackendProbe, type CheckResult } from './types';

export abstract class MonitorConnection<C> implements BackendProbe {
  private connection: C | undefined;
  /** Bumped on every drop so a connect that finishes after its check timed out is discarded. */
  private incarnation = 0;
  private closed = false;

  constructor(protected readonly label: string) {}

  /** Opens a connection within `timeoutMs`. */
  protected abstract open(timeoutMs: number): Promise<C>;
  /** Runs the protocol's checks on an open connection. */
  protected abstract inspect(connection: C): Promise<CheckResult>;
  /** Ends a connection at once, without waiting for the server. */
  protected abstract destroy(connection: C): void;

  async check(timeoutMs: number): Promise<CheckResult> {
    if (this.closed) return failedCheck(TopologyErrors.monitorClosed(this.label).message);
    const attempt = this.attempt(timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<CheckResult>((resolve) => {
      timer = setTimeout(() => {
        this.drop();
        resolve(failedCheck(TopologyErrors.checkTimeout(this.label, timeoutMs).message));
      }, timeoutMs);
    });
    try {
      return await Promise.race([attempt, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.closed = true;
    this.drop();
  }

  /** A connection reported an error or closed: drop it if it is still the current one. */
  protected lost(connection: C): void {
    if (this.connection === connection) this.drop();
  }

  /** Ends the current connection; the next check reconnects. */
  private drop(): void {
    this.incarnation++;
    const connection = this.connection;
    this.connection = undefined;
    if (connection !== undefined) this.destroy(connection);
  }

  private async attempt(timeoutMs: number): Promise<CheckResult> {
    const incarnation = this.incarnation;
    try {
      if (this.connection === undefined) {
        const opened = await this.open(timeoutMs);
        if (incarnation !== this.incarnation || this.closed) {
          this.destroy(opened);
          return failedCheck(TopologyErrors.monitorClosed(this.label).message);
        }
        this.connection = opened;
      }
      return await this.inspect(this.connection);
    } catch (err) {
      if (incarnation === this.incarnation) this.drop();
      return failedCheck(describeError(err));
    }
  }
}

/** A readable reason for any failure; Node's AggregateError (every address refused) has no message of its own. */
export function describeError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describeError(err.errors[0]);
  return errorMessage(err) || errorCode(err) || String(err);
}
