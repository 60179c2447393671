// Relays a backend's answers to the client for one unit of work: injected answers swallowed,
// refusals substituted, rows held until their result completes (bounded by max_result_rows and
// max_result_bytes), COPY streamed both ways, every type's bytes forwarded as the backend sent them.
import { BackendCode as BackendCodeExport, isSupportedType, typedFrameAt, type Frame } from '@dbproxy/protocol-pg';
import { emptyArray as emptyArrayExport } from '@dbproxy/util';
import { PgEdgeErrors } from '../errors';
import type { ResultBudget } from './result-budget';
import { SliceWriter } from './slice-writer';
import type { Expectation } from './statements';
/** Read once: through the package's CommonJS `export *` every access would be a getter call. */
const BackendCode = BackendCodeExport;
const emptyArray = emptyArrayExport;

export interface RelayHooks {
  /** ReadyForQuery for the unit's Sync or Query arrived (already queued for the client). */
  ready(status: number): void;
  /** Everything sent so far was answered, but the batch has no Sync yet (the client sent Flush). */
  drained(): void;
  /** The unit must fail closed: the session chooses between closing the connection and draining it. */
  fail(error: Error, fatal: boolean): void;
  /** The backend entered COPY FROM STDIN: the client's messages go to it until the COPY ends (see `copyingIn`). */
  copyIn(): void;
  /** The backend sent a FATAL (or PANIC) ErrorResponse: its connection ends; `frame` is that error. */
  backendFatal(frame: Frame): void;
}

export interface RelayLimits {
  readonly maxRows: number;
  readonly maxBytes: number;
  /** Shared by every session of the process (max_buffered_result_bytes). */
  readonly budget: ResultBudget;
}

const VOID_OID = 2278;
const UNKNOWN_OID = 705;

/** Types protocol-pg decodes (spec 003's list): only a value the proxy must read itself needs one; everything else is forwarded as bytes. */
export function carriedType(oid: number): boolean {
  return isSupportedType(oid) || oid === VOID_OID || oid === UNKNOWN_OID;
}

export class ResponseRelay {
  /** What goes to the client at the next flush. */
  readonly out = new SliceWriter();
  private readonly rows = new SliceWriter();
  private rowCount = 0;
  /** Bytes of `rows` taken from the process-wide budget. */
  private budgeted = 0;
  private readonly expect: Expectation[] = [];
  private head = 0;
  /** Set while draining after a failure: nothing more reaches the client until ReadyForQuery. */
  draining: Error | undefined;
  /** A ParameterStatus arrived: the connection's session state changed. */
  sawParameterStatus = false;
  /** SQLSTATE of the backend's first ErrorResponse in this unit (for the unit's span). */
  sqlState: string | undefined;
  /** COPY TO STDOUT is streaming: CopyData goes straight out (unheld: PgBouncer bounds no COPY either). */
  private copyingOut = false;
  /**
   * COPY FROM STDIN is open: the client's messages go to the backend. A simple Query's COPY ends
   * with the client's CopyDone or CopyFail; an extended one with the client's next Sync after that
   * (the backend ignored the batch's own Sync while in COPY) or after the backend's error.
   */
  copyingIn: 'simple' | 'extended' | undefined;
  /** The extended COPY's data ended (CopyDone/CopyFail sent, or the backend failed it): the next Sync ends it. */
  copyEnded = false;

  constructor(
    private readonly limits: RelayLimits,
    private readonly hooks: RelayHooks,
  ) {}

  /** The queue `BatchPlan.emit` and simple queries push onto. */
  get expectations(): Expectation[] {
    return this.expect;
  }

  get pending(): number {
    return this.expect.length - this.head;
  }

  /** A Sync or Query is still unanswered: the unit ends with a ReadyForQuery. */
  awaitsReady(): boolean {
    for (let i = this.head; i < this.expect.length; i++) if (this.expect[i].kind === 'sync' || this.expect[i].kind === 'query') return true;
    return false;
  }

  reset(): void {
    emptyArray(this.expect);
    this.head = 0;
    this.clearRows();
    this.rowCount = 0;
    this.draining = undefined;
    this.sawParameterStatus = false;
    this.sqlState = undefined;
    this.copyingOut = this.copyEnded = false;
    this.copyingIn = undefined;
  }

  /** The backend answered the COPY (CommandComplete or an error): a simple one is over; an extended one waits for the client's Sync. */
  private endCopy(): void {
    this.copyingOut = false;
    if (this.copyingIn === 'extended') this.copyEnded = true;
    else this.copyingIn = undefined;
  }

  /** Drops held rows and starts discarding until ReadyForQuery. */
  drain(error: Error): void {
    this.draining = error;
    this.clearRows();
    this.rowCount = 0;
  }

  /** Held rows leave (sent or dropped): their bytes go back to the process-wide budget. */
  private clearRows(): void {
    this.rows.clear();
    this.giveBack();
  }

  private sendRows(): void {
    this.out.append(this.rows);
    this.giveBack();
  }

  private giveBack(): void {
    if (this.budgeted === 0) return;
    this.limits.budget.give(this.budgeted);
    this.budgeted = 0;
  }

  onFrame(frame: Frame): void {
    this.onMessage(frame.code, frame.bytes, 0, frame.bytes.length);
  }

  /** One backend message, `buf[start, end)` (the whole frame): forwarded as a range, a Frame made only for the rare kinds that read it. */
  onMessage(code: number, buf: Buffer, start: number, end: number): void {
    const expected = this.expect[this.head];
    if (expected !== undefined && expected.kind === 'setup') return this.onSetupFrame(code, buf, start, end);
    if (code === BackendCode.DataRow) return this.onRow(buf, start, end);
    if (this.copyingOut && (code === BackendCode.CopyData || code === BackendCode.CopyDone)) return void (this.draining || this.out.addRange(buf, start, end));
    if (code === BackendCode.ReadyForQuery) return this.onReady(buf, start, end);
    if (code === BackendCode.ErrorResponse) return this.onError(typedFrameAt(buf, start, end));
    if (this.draining) return this.afterDrainFrame(code);
    switch (code) {
      case BackendCode.CommandComplete:
      case BackendCode.EmptyQueryResponse:
      case BackendCode.PortalSuspended:
        this.endCopy();
        this.sendRows();
        this.rowCount = 0;
        this.out.addRange(buf, start, end);
        if (this.current()?.kind === 'execute') {
          this.head++;
          // an Execute answered after a Flush (a cursor fetching rows in steps): the batch goes on
          if (this.head === this.expect.length) this.hooks.drained();
        }
        return;
      case BackendCode.RowDescription:
        return this.answer(code, buf, start, end, this.current()?.kind !== 'query');
      case BackendCode.ParameterDescription:
        this.noteInferred(buf.subarray(start + 5, end));
        return this.answer(code, buf, start, end, false);
      case BackendCode.ParseComplete:
      case BackendCode.BindComplete:
      case BackendCode.CloseComplete:
      case BackendCode.NoData:
        return this.answer(code, buf, start, end, true);
      case BackendCode.ParameterStatus:
        this.sawParameterStatus = true;
        return this.out.addRange(buf, start, end);
      case BackendCode.NoticeResponse:
      case BackendCode.NotificationResponse:
        return this.out.addRange(buf, start, end);
      case BackendCode.CopyOutResponse:
        this.copyingOut = true;
        return this.out.addRange(buf, start, end);
      case BackendCode.CopyInResponse:
        return this.onCopyIn(buf, start, end);
      case BackendCode.CopyBothResponse:
        return this.hooks.fail(PgEdgeErrors.unsupportedStatement('COPY BOTH (streaming replication)'), true);
      default:
        return this.hooks.fail(PgEdgeErrors.protocol(`unexpected backend message ${String.fromCharCode(code)}`), true);
    }
  }

  /** COPY FROM STDIN: forwarded, and the client's data follows. */
  private onCopyIn(buf: Buffer, start: number, end: number): void {
    this.copyingIn = this.current()?.kind === 'query' ? 'simple' : 'extended';
    this.copyEnded = false;
    this.out.addRange(buf, start, end);
    this.hooks.copyIn();
  }

  /** The answers to the session's settings (set_config / RESET before its unit) are the proxy's own: none reaches the client. */
  private onSetupFrame(code: number, buf: Buffer, start: number, end: number): void {
    if (code === BackendCode.ErrorResponse) {
      const payload = buf.subarray(start + 5, end);
      return this.hooks.fail(PgEdgeErrors.settingsNotApplied(`${sqlStateField(payload) ?? ''} ${errorText(payload)}`.trim()), true);
    }
    if (code !== BackendCode.ReadyForQuery) return;
    this.head++;
    if (this.head === this.expect.length) this.hooks.drained();
  }

  /** The backend ended before answering the probe ahead of the unit: it never read the unit, which may run elsewhere. */
  unitUnread(): boolean {
    return this.expect[this.head]?.probe === true;
  }

  private current(): Expectation | undefined {
    return this.head < this.expect.length ? this.expect[this.head] : undefined;
  }

  /** Forwards (or swallows) the answer to the current message; `completes` pops it. */
  private answer(code: number, buf: Buffer, start: number, end: number, completes: boolean): void {
    const current = this.current();
    if (!current) return this.hooks.fail(PgEdgeErrors.protocol(`unsolicited backend message ${String.fromCharCode(code)}`), true);
    if (current.forward) this.out.addRange(buf, start, end);
    if (completes) {
      this.head++;
      if (this.head === this.expect.length) this.hooks.drained();
    }
  }

  private onRow(buf: Buffer, start: number, end: number): void {
    if (this.draining) return;
    this.rowCount++;
    if (this.rowCount > this.limits.maxRows) return this.hooks.fail(PgEdgeErrors.resultTooLarge('max_result_rows', this.limits.maxRows), false);
    const size = end - start;
    if (this.rows.length + size > this.limits.maxBytes) {
      return this.hooks.fail(PgEdgeErrors.resultTooLarge('max_result_bytes', this.limits.maxBytes), false);
    }
    const budget = this.limits.budget;
    if (!budget.take(size)) return this.hooks.fail(PgEdgeErrors.resultBuffersFull(budget.limit), false);
    this.budgeted += size;
    this.rows.addRange(buf, start, end);
  }

  private onError(frame: Frame): void {
    this.endCopy();
    if (isFatal(frame.payload)) return this.hooks.backendFatal(frame);
    let current = this.current();
    if (!current?.replaceError) this.sqlState ??= sqlStateField(frame.payload);
    if (!this.draining) {
      this.sendRows();
      this.rowCount = 0;
      this.out.add(current?.replaceError ?? frame.bytes);
    }
    if (current?.kind === 'query') return;
    // PostgreSQL skips every message up to Sync after an error.
    while (current && current.kind !== 'sync') {
      current.undo?.();
      this.head++;
      current = this.current();
    }
    if (!current) this.hooks.drained();
  }

  private onReady(buf: Buffer, start: number, end: number): void {
    const status = buf[start + 5] as number; // the byte after the header
    // ReadyForQuery answers the unit's Sync (or Query): whatever was still expected before it was skipped.
    this.head = this.expect.length;
    if (!this.draining) {
      this.sendRows();
      this.out.addRange(buf, start, end);
    }
    this.rowCount = 0;
    this.hooks.ready(status);
  }

  /** Draining after a bound was hit: a COPY that starts now cannot be drained (it waits for data) and ends the connection. */
  private afterDrainFrame(code: number): void {
    if (code === BackendCode.CopyOutResponse) this.copyingOut = true;
    else if (code === BackendCode.CopyInResponse || code === BackendCode.CopyBothResponse) this.hooks.fail(this.draining ?? PgEdgeErrors.unsupportedStatement('COPY'), true);
  }

  private noteInferred(payload: Buffer): void {
    const current = this.current();
    if (current?.statement) current.statement.inferred = parameterTypes(payload);
  }
}

/** The `C` (SQLSTATE) field of an ErrorResponse, read in place. */
function sqlStateField(payload: Buffer): string | undefined {
  return errorField(payload, 0x43 /* 'C' */);
}

function errorText(payload: Buffer): string {
  return errorField(payload, 0x4d /* 'M' */) ?? '';
}

/** One field of an ErrorResponse (`C` SQLSTATE, `V` non-localized severity...), read in place. */
function errorField(payload: Buffer, field: number): string | undefined {
  let at = 0;
  while (at < payload.length && payload[at] !== 0) {
    const end = payload.indexOf(0, at + 1);
    if (end < 0) return undefined;
    if (payload[at] === field) return payload.toString(field === 0x43 ? 'latin1' : 'utf8', at + 1, end);
    at = end + 1;
  }
  return undefined;
}

/** FATAL or PANIC: the backend closes the connection after it (`V` since 9.6, else the localized `S`). */
export function isFatal(payload: Buffer): boolean {
  const severity = errorField(payload, 0x56 /* 'V' */) ?? errorField(payload, 0x53 /* 'S' */);
  return severity === 'FATAL' || severity === 'PANIC';
}

function parameterTypes(payload: Buffer): number[] {
  const count = payload.readInt16BE(0);
  const types: number[] = [];
  for (let i = 0; i < count; i++) types.push(payload.readUInt32BE(2 + 4 * i));
  return types;
}
