// A group of servers started together in one run directory: cleanup on failure, destroy, replicated sets.
import type { LocalServer, ServerProcess } from './server-process';
import { makeDir, tmpDir, type TempDir } from './temp-dir';
import type { SystemUser } from './system';

/** A primary with replicas on real replication (MariaDB GTID, PostgreSQL streaming, Redis). */
export interface ReplicatedServers<S extends ServerProcess> {
  readonly primary: S;
  readonly replicas: readonly S[];
  /** The run directory holding every member's files. */
  readonly dir: string;
  /** Resolves once every running replica has applied all the primary has written so far. */
  waitForReplicaCatchUp(options?: { timeoutMs?: number }): Promise<void>;
  /** Ends every server quickly and deletes all files; safe to call more than once. */
  destroy(): Promise<void>;
}

/** The servers of one start call and the directory they live in. */
export class ServerGroup {
  private readonly members: LocalServer[] = [];

  constructor(private readonly run: TempDir) {}

  get dir(): string {
    return this.run.path;
  }

  /** A member's own directory inside the run directory. */
  memberDir(name: string, owner?: SystemUser): Promise<string> {
    return makeDir(this.run.path, name, 0o711, owner);
  }

  track<S extends LocalServer>(server: S): S {
    this.members.push(server);
    return server;
  }

  async destroy(): Promise<void> {
    await Promise.allSettled(this.members.map((member) => member.halt()));
    await this.run.remove();
  }

  /** After a failed start: end every process but keep the files (the watcher deletes them at exit). */
  async abandon(): Promise<void> {
    await Promise.allSettled(this.members.map((member) => member.halt()));
  }
}

/** Runs `build` in a fresh run directory; if it throws, ends what it started and rethrows. */
export async function startGroup<T>(label: string, build: (group: ServerGroup) => Promise<T>): Promise<T> {
  const group = new ServerGroup(await tmpDir(label));
  try {
    return await build(group);
  } catch (err) {
    await group.abandon();
    throw err;
  }
}

/** Like Promise.all, but waits for every task to settle first, so nothing is left starting behind a failure. */
export async function settleAll<T>(tasks: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Builds the ReplicatedServers object every replicated start function returns. */
export function replicatedServers<S extends LocalServer>(
  group: ServerGroup,
  primary: S,
  replicas: readonly S[],
  catchUp: (runningReplicas: readonly S[], timeoutMs: number) => Promise<void>,
): ReplicatedServers<S> {
  let destroyed: Promise<void> | undefined;
  return {
    primary,
    replicas,
    dir: group.dir,
    async waitForReplicaCatchUp(options = {}) {
      const running = replicas.filter((replica) => replica.running);
      if (running.length > 0) await catchUp(running, options.timeoutMs ?? 30_000);
    },
    destroy() {
      destroyed ??= group.destroy();
      return destroyed;
    },
  };
}
