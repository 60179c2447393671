// Framing of journal records: [u32 BE payload length][u32 BE CRC-32 of the payload][JSON payload].
// A reader stops at the first frame that is short, oversize or fails its checksum: that is the
// torn tail of a crash, and nothing after it is trusted.
import { Buffer } from 'node:buffer';
import { crc32 } from 'node:zlib';

export const HEADER_BYTES = 8;
/** No record comes near this; a larger length is garbage, not a record. */
export const MAX_RECORD_BYTES = 1 << 20;

/** The first record of every journal: who writes it. */
export interface HeaderRecord {
  readonly t: 'journal';
  readonly coordinator: string;
  readonly createdAt: number;
}

export interface JournalBranch {
  readonly shard: string;
  readonly backend: string;
  /** The branch qualifier (participant position). */
  readonly bqual: string;
}

/** Commit decision: written and fsynced before any participant hears XA COMMIT. */
export interface CommitRecord {
  readonly t: 'commit';
  readonly xid: string;
  readonly branches: readonly JournalBranch[];
  readonly at: number;
}

/** Every branch of `xid` is settled: the commit record may be compacted away. */
export interface DoneRecord {
  readonly t: 'done';
  readonly xid: string;
}

export type JournalRecord = HeaderRecord | CommitRecord | DoneRecord;

export function encodeRecord(record: JournalRecord): Buffer {
  const payload = Buffer.from(JSON.stringify(record), 'utf8');
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame.writeUInt32BE(crc32(payload), 4);
  payload.copy(frame, HEADER_BYTES);
  return frame;
}

function isRecord(v: unknown): v is JournalRecord {
  if (v === null || typeof v !== 'object') return false;
  const t = (v as { t?: unknown }).t;
  return t === 'journal' || t === 'commit' || t === 'done';
}

export interface DecodedJournal {
  readonly records: JournalRecord[];
  /** Bytes of whole, valid records from the start; the file is cut here. */
  readonly validBytes: number;
  /** Why reading stopped before the end (the torn tail), if it did. */
  readonly tornReason?: string;
}

/** Every valid record from the start of `data`, and where the valid part ends. */
export function decodeRecords(data: Buffer): DecodedJournal {
  const records: JournalRecord[] = [];
  let at = 0;
  while (at < data.length) {
    if (data.length - at < HEADER_BYTES) return { records, validBytes: at, tornReason: `partial header at byte ${at}` };
    const length = data.readUInt32BE(at);
    if (length === 0 || length > MAX_RECORD_BYTES) return { records, validBytes: at, tornReason: `impossible length ${length} at byte ${at}` };
    if (data.length - at - HEADER_BYTES < length) return { records, validBytes: at, tornReason: `partial record at byte ${at}` };
    const payload = data.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
    if (crc32(payload) !== data.readUInt32BE(at + 4)) return { records, validBytes: at, tornReason: `checksum mismatch at byte ${at}` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload.toString('utf8'));
    } catch {
      return { records, validBytes: at, tornReason: `unreadable record at byte ${at}` };
    }
    if (!isRecord(parsed)) return { records, validBytes: at, tornReason: `unknown record at byte ${at}` };
    records.push(parsed);
    at += HEADER_BYTES + length;
  }
  return { records, validBytes: at };
}
