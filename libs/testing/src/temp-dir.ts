// Fresh temporary directories under os.tmpdir(), removed on demand and, by a watcher, when the test process dies.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { SystemUser } from './system';

/** A directory of one's own; `remove()` deletes it and everything in it. */
export interface TempDir {
  readonly path: string;
  remove(): Promise<void>;
}

/** Every temporary directory of this library starts with this under os.tmpdir(). */
export const TEMP_PREFIX = 'dbproxy-test-';

/**
 * Starts a detached `sh` that blocks reading a pipe only we hold. When this process dies (even
 * by SIGKILL) the pipe closes, the read returns, and the watcher deletes the directory a second
 * later (after servers that die with us have let go of it).
 */
function startWatcher(path: string): ChildProcess {
  const watcher = spawn('/bin/sh', ['-c', 'read _unused; sleep 1; exec rm -rf -- "$0"', path], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  watcher.on('error', () => undefined);
  watcher.unref();
  const stdin = watcher.stdin as (Writable & { unref?: () => void }) | null;
  stdin?.on('error', () => undefined);
  stdin?.unref?.();
  return watcher;
}

class WatchedDir implements TempDir {
  private removed = false;

  constructor(
    readonly path: string,
    private readonly watcher: ChildProcess,
  ) {}

  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    await rm(this.path, { recursive: true, force: true, maxRetries: 3 });
    this.watcher.kill('SIGKILL');
  }
}

/** Creates `<os.tmpdir()>/dbproxy-test-<label>-XXXXXX`, traversable by other users (PostgreSQL runs as one). */
export async function tmpDir(label = 'tmp'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), `${TEMP_PREFIX}${label}-`));
  await chmod(path, 0o711);
  return new WatchedDir(path, startWatcher(path));
}

/** Creates `parent/name` owned by `owner` (when given and we are root) with the given mode. */
export async function makeDir(parent: string, name: string, mode: number, owner?: SystemUser): Promise<string> {
  const path = join(parent, name);
  await mkdir(path);
  await chmod(path, mode);
  if (owner) await chown(path, owner.uid, owner.gid);
  return path;
}
