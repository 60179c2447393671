// The sessions with a query running, which the deadline sweeper visits. Sessions join and leave
// once per query: an array in which each member keeps its slot (removal moves the last member
// into it), where a Set grows and rehashes its table as entries come and go.

export interface DeadlineWatched {
  /** Called by the sweeper; the session acts if its running query passed its deadline. */
  checkDeadline(nowMs: number): void;
  /** This session's slot in RunningSessions; -1 while it runs nothing. Only RunningSessions sets it. */
  runningSlot: number;
}

export class RunningSessions {
  private readonly members: DeadlineWatched[] = [];

  get size(): number {
    return this.members.length;
  }

  has(session: DeadlineWatched): boolean {
    return session.runningSlot >= 0 && this.members[session.runningSlot] === session;
  }

  add(session: DeadlineWatched): void {
    if (this.has(session)) return;
    session.runningSlot = this.members.length;
    this.members.push(session);
  }

  delete(session: DeadlineWatched): void {
    if (!this.has(session)) return;
    const at = session.runningSlot;
    const last = this.members.pop() as DeadlineWatched;
    if (last !== session) {
      this.members[at] = last;
      last.runningSlot = at;
    }
    session.runningSlot = -1;
  }

  /** Calls checkDeadline on every member (of a copy: a check may end sessions or start others). */
  checkDeadlines(nowMs: number): void {
    for (const session of this.members.slice()) session.checkDeadline(nowMs);
  }
}
