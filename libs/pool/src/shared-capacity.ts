// One bound over several pools of the same backend whose connections are not interchangeable (e.g.
// negotiated with different protocol options): together they hold at most `limit` connections,
// open, connecting or closing. A member that needs a connection while the bound is reached closes
// another member's longest-idle one, and opens its own once that one has closed.
import { PoolErrors } from './errors';

/** What SharedCapacity needs of a pool (BackendPool implements it). */
export interface CapacityMember {
  /** Connections that count against the bound: open, connecting, or still closing. */
  readonly footprint: number;
  /** Of those, closed connections whose destroy has not finished (room on its way). */
  readonly closing: number;
  /** Closes the member's longest-idle connection; false when it has none idle. */
  yieldIdle(reason: string): boolean;
  /** Room may have come back: serve waiters. */
  roomFreed(): void;
}

export class SharedCapacity {
  private readonly members = new Set<CapacityMember>();

  constructor(
    private bound: number,
    private readonly name = 'shared capacity',
  ) {
    this.limit = bound;
  }

  get limit(): number {
    return this.bound;
  }

  /** Pools sharing the bound. */
  get memberCount(): number {
    return this.members.size;
  }

  /** A new bound (a new configuration epoch); connections over it close as they come back. */
  set limit(value: number) {
    if (!Number.isInteger(value) || value < 1) throw PoolErrors.invalidOptions(this.name, `the shared limit must be an integer >= 1, got ${value}`);
    const grew = value > this.bound;
    this.bound = value;
    if (grew) for (const member of this.members) member.roomFreed();
    // lowered: idle connections over it close now (lent ones as they come back)
    else {
      let closing = true;
      while (closing && this.overBound) closing = this.yieldAny();
    }
  }

  private yieldAny(): boolean {
    for (const member of this.members) if (member.yieldIdle('surplus')) return true;
    return false;
  }

  join(member: CapacityMember): void {
    this.members.add(member);
  }

  leave(member: CapacityMember): void {
    if (this.members.delete(member)) this.freed(member);
  }

  /** Connections of every member, open, connecting or closing. */
  get footprint(): number {
    let total = 0;
    for (const member of this.members) total += member.footprint;
    return total;
  }

  hasRoom(): boolean {
    return this.footprint < this.bound;
  }

  get overBound(): boolean {
    return this.footprint > this.bound;
  }

  /**
   * Asks another member to close an idle connection for `asker`; true when one closed. While a
   * close is still finishing somewhere, room is already on its way and nothing more is closed.
   */
  makeRoom(asker: CapacityMember): boolean {
    for (const member of this.members) if (member.closing > 0) return false;
    for (const member of this.members) if (member !== asker && member.yieldIdle('shared-capacity')) return true;
    return false;
  }

  /** A connection of `from` finished closing: the other members may open now. */
  freed(from: CapacityMember): void {
    for (const member of this.members) if (member !== from) member.roomFreed();
  }
}
