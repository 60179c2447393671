// The single-writer lock of a journal: `<journal>.lock` created exclusively, holding the owner's
// pid and host. A lock whose process is gone (same host, pid not alive) is stale and taken over,
// so a coordinator killed with SIGKILL restarts on its own journal; a live owner is refused.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync, fsyncSync } from 'node:fs';
import { hostname } from 'node:os';
import { XaErrors } from '../errors';

interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly since: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as LockOwner;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
}

/** A pid of this host that is not running (or is this very process: a container restarted as pid 1). */
function stale(owner: LockOwner | undefined): boolean {
  if (!owner) return true;
  return owner.host === hostname() && (owner.pid === process.pid || !alive(owner.pid));
}

/** Locks this process holds: a second journal opened here on the same path is refused too. */
const HELD = new Set<string>();

export class JournalLock {
  private constructor(private readonly path: string) {}

  /** Takes the lock of `journalPath` or throws DBP_ERR_XA_JOURNAL_LOCKED naming the owner. */
  static acquire(journalPath: string): JournalLock {
    const path = `${journalPath}.lock`;
    if (HELD.has(path)) throw XaErrors.journalLocked(journalPath, `this process (pid ${process.pid}), lock file ${path}`);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), since: Date.now() } satisfies LockOwner));
        fsyncSync(fd);
        closeSync(fd);
        HELD.add(path);
        return new JournalLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const owner = readOwner(path);
        if (!stale(owner)) throw XaErrors.journalLocked(journalPath, `pid ${owner?.pid} on ${owner?.host}, lock file ${path}`);
        unlinkSync(path);
      }
    }
    throw XaErrors.journalLocked(journalPath, `lock file ${path} reappeared while taking it over`);
  }

  release(): void {
    HELD.delete(this.path);
    try {
      if (readOwner(this.path)?.pid === process.pid) unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}
