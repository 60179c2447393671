// Slot gates of one session (spec 002): while a fan-out (or a retried command) is in flight on a
// cluster, a later command of the same session on one of its slots, or a cluster-wide command,
// waits for it, so a retry can never run after commands the client sent later.

/** A gate on every slot: a single command waiting to be retried. */
export const ANY_GROUP = -3;

export class SlotGates {
  private readonly counts = new Map<number, number>();

  /** The hot path's one check. */
  get empty(): boolean {
    return this.counts.size === 0;
  }

  /** True when a command on `group` (a slot or shard; -1: the home node) must wait. */
  blocks(group: number): boolean {
    return this.counts.has(group) || this.counts.has(ANY_GROUP);
  }

  blocksAny(groups: readonly number[]): boolean {
    return this.counts.has(ANY_GROUP) || groups.some((g) => this.counts.has(g));
  }

  open(group: number): void {
    this.counts.set(group, (this.counts.get(group) ?? 0) + 1);
  }

  close(group: number): void {
    const n = (this.counts.get(group) ?? 1) - 1;
    if (n > 0) this.counts.set(group, n);
    else this.counts.delete(group);
  }
}
