// XIDs of this coordinator: gtrid `dbpxa.<coordinator>.<ms base36>.<seq base36>`, bqual = the
// participant's position. The coordinator id comes from the journal, so after a restart on the
// same journal recovery still recognises its own branches; the time gives an in-doubt branch its age.
import { Buffer } from 'node:buffer';

export const GTRID_PREFIX = 'dbpxa';
const FORMAT_ID = 1;

/** One branch of a distributed transaction as MySQL names it (XA RECOVER's row). */
export interface BranchXid {
  readonly formatId: number;
  readonly gtrid: Buffer;
  readonly bqual: Buffer;
}

export class XidFactory {
  private seq = 0;

  constructor(private readonly coordinatorId: string) {}

  /** A gtrid never issued before by this coordinator: the clock plus a counter within the process. */
  next(now = Date.now()): string {
    this.seq = (this.seq + 1) % 0x7fffffff;
    return `${GTRID_PREFIX}.${this.coordinatorId}.${now.toString(36)}.${this.seq.toString(36)}`;
  }

  /** True when `gtrid` was issued by this coordinator (any process on the same journal). */
  owns(gtrid: string): boolean {
    return gtrid.startsWith(`${GTRID_PREFIX}.${this.coordinatorId}.`);
  }
}

/** When the transaction named `gtrid` started (ms since epoch), or undefined for a foreign gtrid. */
export function startedAt(gtrid: string): number | undefined {
  const parts = gtrid.split('.');
  if (parts.length !== 4 || parts[0] !== GTRID_PREFIX) return undefined;
  const ms = parseInt(parts[2] as string, 36);
  return Number.isFinite(ms) ? ms : undefined;
}

export function branchOf(gtrid: string, position: number): BranchXid {
  return { formatId: FORMAT_ID, gtrid: Buffer.from(gtrid, 'utf8'), bqual: Buffer.from(String(position), 'utf8') };
}

/** The XID in SQL: hex literals, so any bytes another transaction manager chose are safe. */
export function xidSql(xid: BranchXid): string {
  return `X'${xid.gtrid.toString('hex')}',X'${xid.bqual.toString('hex')}',${xid.formatId}`;
}

/** A branch from XA RECOVER's row (formatID, gtrid_length, bqual_length, data). */
export function parseRecoverRow(row: { formatID: unknown; gtrid_length: unknown; bqual_length: unknown; data: unknown }): BranchXid {
  const data = Buffer.isBuffer(row.data) ? row.data : Buffer.from(String(row.data), 'binary');
  const g = Number(row.gtrid_length);
  const b = Number(row.bqual_length);
  return { formatId: Number(row.formatID), gtrid: data.subarray(0, g), bqual: data.subarray(g, g + b) };
}

/** How operators and GET /xa name a gtrid: its text when printable, else `hex:...`. */
export function gtridText(gtrid: Buffer): string {
  const text = gtrid.toString('utf8');
  return /^[\x20-\x7e]*$/.test(text) ? text : `hex:${gtrid.toString('hex')}`;
}

/** The inverse of gtridText. */
export function gtridBytes(text: string): Buffer {
  return text.startsWith('hex:') ? Buffer.from(text.slice(4), 'hex') : Buffer.from(text, 'utf8');
}
