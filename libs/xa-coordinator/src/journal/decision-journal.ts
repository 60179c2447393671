// The coordinator's decision journal: one append-only file with one writer. A commit decision is
// on disk (write + fdatasync) before any participant is told XA COMMIT; "done" records ride along
// with the next write. Group commit: records queued while an fsync runs share the next one.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { mkdirSync, existsSync } from 'node:fs';
import { open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { XaErrors } from '../errors';
import { JournalLock } from './journal-lock';
import { decodeRecords, encodeRecord, type CommitRecord, type JournalRecord } from './record-codec';

export interface JournalOptions {
  /** Share one fsync among the decisions queued while the previous one ran (default true). */
  readonly groupCommit?: boolean;
  /** Rewrite the file without settled transactions once it holds this many done records (default 10000). */
  readonly compactAfterDone?: number;
  /** Told about a torn tail cut at open. */
  readonly onTornTail?: (reason: string, droppedBytes: number) => void;
}

export interface JournalStats {
  readonly fsyncs: number;
  readonly durableRecords: number;
  readonly compactions: number;
  readonly bytes: number;
}

interface Pending {
  readonly frame: Buffer;
  readonly durable: boolean;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class DecisionJournal {
  private readonly pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  private doneSinceCompaction = 0;
  private stats = { fsyncs: 0, durableRecords: 0, compactions: 0, bytes: 0 };

  private constructor(
    readonly path: string,
    readonly coordinatorId: string,
    private handle: FileHandle,
    private readonly lock: JournalLock,
    /** Commit decisions whose transaction is not settled everywhere yet. */
    private readonly open: Map<string, CommitRecord>,
    private readonly options: JournalOptions,
    bytes: number,
  ) {
    this.stats.bytes = bytes;
  }

  /** Locks, reads (cutting a torn tail) or creates the journal at `path`. */
  static async open(path: string, options: JournalOptions = {}): Promise<DecisionJournal> {
    mkdirSync(dirname(path), { recursive: true });
    const lock = JournalLock.acquire(path);
    try {
      return existsSync(path) ? await DecisionJournal.reopen(path, lock, options) : await DecisionJournal.create(path, lock, options);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  private static async create(path: string, lock: JournalLock, options: JournalOptions): Promise<DecisionJournal> {
    const coordinator = randomBytes(6).toString('hex');
    const frame = encodeRecord({ t: 'journal', coordinator, createdAt: Date.now() });
    const handle = await open(path, 'wx', 0o600);
    await handle.write(frame, 0, frame.length, 0);
    await handle.sync();
    await fsyncDirectory(dirname(path));
    return new DecisionJournal(path, coordinator, handle, lock, new Map(), options, frame.length);
  }

  private static async reopen(path: string, lock: JournalLock, options: JournalOptions): Promise<DecisionJournal> {
    const data = await readFile(path);
    const decoded = decodeRecords(data);
    const header = decoded.records[0];
    if (!header || header.t !== 'journal') {
      throw XaErrors.journalCorrupt(path, decoded.tornReason ?? 'its first record is not a journal header');
    }
    const handle = await open(path, 'r+');
    if (decoded.validBytes < data.length) {
      await handle.truncate(decoded.validBytes);
      await handle.sync();
      options.onTornTail?.(decoded.tornReason ?? 'trailing bytes', data.length - decoded.validBytes);
    }
    const openDecisions = new Map<string, CommitRecord>();
    for (const r of decoded.records) {
      if (r.t === 'commit') openDecisions.set(r.xid, r);
      else if (r.t === 'done') openDecisions.delete(r.xid);
    }
    const journal = new DecisionJournal(path, header.coordinator, handle, lock, openDecisions, options, decoded.validBytes);
    if (decoded.records.length - 1 > openDecisions.size) await journal.compact();
    return journal;
  }

  /** The commit decision for `xid`, while it is not settled. */
  decision(xid: string): CommitRecord | undefined {
    return this.open.get(xid);
  }

  /** Every unsettled commit decision. */
  openDecisions(): CommitRecord[] {
    return [...this.open.values()];
  }

  /** Resolves once the commit decision is on disk (fsynced). */
  recordCommit(record: Omit<CommitRecord, 't'>): Promise<void> {
    const full: CommitRecord = { t: 'commit', ...record };
    this.open.set(full.xid, full);
    return this.enqueue(full, true);
  }

  /** Marks `xid` settled; written with the next batch, no fsync of its own. */
  recordDone(xid: string): Promise<void> {
    if (!this.open.delete(xid)) return Promise.resolve();
    this.doneSinceCompaction++;
    return this.enqueue({ t: 'done', xid }, false);
  }

  statistics(): JournalStats {
    return { ...this.stats };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    while (this.flushing) await this.flushing;
    this.closed = true;
    await this.handle.close();
    this.lock.release();
  }

  private enqueue(record: JournalRecord, durable: boolean): Promise<void> {
    if (this.closed) return Promise.reject(XaErrors.journalClosed(this.path));
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ frame: encodeRecord(record), durable, resolve, reject });
      this.kick();
    });
  }

  /** Starts the flush loop unless it runs; records queued while it winds down start it again. */
  private kick(): void {
    if (this.flushing) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = undefined;
      if (this.pending.length > 0) this.kick();
    });
  }

  /** Writes queued records in batches (one batch = one write + at most one fsync) until none are left. */
  private async flushLoop(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.options.groupCommit === false ? this.pending.splice(0, 1) : this.pending.splice(0);
      try {
        const data = batch.length === 1 ? (batch[0] as Pending).frame : Buffer.concat(batch.map((p) => p.frame));
        await this.handle.write(data, 0, data.length, this.stats.bytes);
        this.stats.bytes += data.length;
        if (batch.some((p) => p.durable)) {
          await this.handle.datasync();
          this.stats.fsyncs++;
          this.stats.durableRecords += batch.filter((p) => p.durable).length;
        }
        for (const p of batch) p.resolve();
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
      if (this.doneSinceCompaction >= (this.options.compactAfterDone ?? 10_000) && this.pending.length === 0) await this.compact();
    }
  }

  /** Rewrites the journal with its header and the unsettled decisions only: temp file, fsync, rename, fsync the directory. */
  private async compact(): Promise<void> {
    const temp = `${this.path}.compact`;
    const frames = [encodeRecord({ t: 'journal', coordinator: this.coordinatorId, createdAt: Date.now() }), ...[...this.open.values()].map(encodeRecord)];
    const data = Buffer.concat(frames);
    const handle = await open(temp, 'w', 0o600);
    try {
      await handle.write(data, 0, data.length, 0);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, this.path);
    await fsyncDirectory(dirname(this.path));
    await this.handle.close();
    this.handle = await open(this.path, 'r+');
    this.stats.bytes = data.length;
    this.stats.compactions++;
    this.doneSinceCompaction = 0;
  }
}
