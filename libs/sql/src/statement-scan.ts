// The result of one fingerprint pass: normalized text, literal positions, VALUES groups, comment tags.
import type { CommentContext } from './comments';
import { IntColumn, TextBuffer } from './scan-buffers';
import type { UnterminatedKind } from './tokenizer';

const NO_HINTS = Object.freeze({});

/** The result of one pass; owned by a Fingerprinter and overwritten by its next run. */
export class StatementScan {
  source = '';
  /** The normalized text. */
  readonly out = new TextBuffer();
  /** Literal and placeholder tokens of the source: kind | (parameter index + 1) << 5, and [start, end) in `source`. */
  readonly rawInfo = new IntColumn();
  readonly rawStart = new IntColumn();
  readonly rawEnd = new IntColumn();
  /** Slots (`?` or `?+`) of the normalized text, in order: the raw literals [from, to) each stands for. */
  readonly slotFrom = new IntColumn();
  readonly slotTo = new IntColumn();
  /** Where each slot's `?` is in `out`: the analysis must not mistake a jsonb `?` operator for a slot, or the reverse. */
  readonly slotOut = new IntColumn();
  /** VALUES row groups: row 0's first slot and slot count, first raw literal, raw literals per row (-1 if rows differ), rows, first row index. */
  readonly groupSlotFrom = new IntColumn();
  readonly groupSlotCount = new IntColumn();
  readonly groupRawFrom = new IntColumn();
  readonly groupRawPerRow = new IntColumn();
  readonly groupRows = new IntColumn();
  readonly groupRowBase = new IntColumn();
  /** Per VALUES row (all groups): its span in the source and in `out`, its slots and raw literals. */
  readonly rowSrcStart = new IntColumn();
  readonly rowSrcEnd = new IntColumn();
  readonly rowOutStart = new IntColumn();
  readonly rowOutEnd = new IntColumn();
  readonly rowSlot = new IntColumn();
  readonly rowSlotEnd = new IntColumn();
  readonly rowRaw = new IntColumn();
  readonly rowRawEnd = new IntColumn();
  statementCount = 0;
  unterminated: UnterminatedKind | undefined;
  unterminatedAt = 0;
  readonly comments: CommentContext = { hints: NO_HINTS };

  reset(source: string): void {
    this.source = source;
    this.out.clear();
    this.rawInfo.length = this.rawStart.length = this.rawEnd.length = 0;
    this.slotFrom.length = this.slotTo.length = this.slotOut.length = 0;
    if (this.groupRows.length > 0 || this.rowSrcStart.length > 0) this.resetGroups();
    this.statementCount = 0;
    this.unterminated = undefined;
    if (this.comments.hints !== NO_HINTS || this.comments.traceparent !== undefined || this.comments.tracestate !== undefined) {
      this.comments.traceparent = undefined;
      this.comments.tracestate = undefined;
      this.comments.hints = NO_HINTS;
    }
  }

  private resetGroups(): void {
    for (const column of [
      this.groupSlotFrom, this.groupSlotCount, this.groupRawFrom, this.groupRawPerRow, this.groupRows, this.groupRowBase,
      this.rowSrcStart, this.rowSrcEnd, this.rowOutStart, this.rowOutEnd, this.rowSlot, this.rowSlotEnd, this.rowRaw, this.rowRawEnd,
    ]) {
      column.length = 0;
    }
  }

  get slotCount(): number {
    return this.slotFrom.length;
  }

  /** Token kind of raw literal `i`. */
  rawKind(i: number): number {
    return this.rawInfo.data[i] & 0x1f;
  }

  /** Parameter index of raw literal `i` (a placeholder), else -1. */
  rawParam(i: number): number {
    return (this.rawInfo.data[i] >> 5) - 1;
  }
}
