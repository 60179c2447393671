// This pg-edge process's live sessions of both modes for the admin interface: GET /sessions,
// GET /pools (the transaction-mode pools) and an operator's kill.
import type { PoolStats } from '@dbproxy/pool';
import { poolSnapshotOf, type SessionSnapshot, type SessionSource } from '@dbproxy/runtime';

/** What a session of either mode offers the admin interface. */
export interface AdminSession {
  readonly adminId: string;
  describe(): SessionSnapshot;
  /** Closes the session; the client is told `reason` where its protocol stream allows. */
  terminate(reason: string): void;
}

export class AdminSessions {
  private readonly live = new Set<AdminSession>();

  constructor(
    private readonly poolStats: () => readonly PoolStats[],
    private readonly statements: () => number,
  ) {}

  add(session: AdminSession): void {
    this.live.add(session);
  }

  delete(session: AdminSession): void {
    this.live.delete(session);
  }

  source(): SessionSource {
    return {
      sessions: () => [...this.live].map((s) => s.describe()),
      pools: () => this.poolStats().map(poolSnapshotOf),
      kill: (id, reason) => {
        for (const session of this.live) {
          if (session.adminId !== id) continue;
          session.terminate(reason);
          return true;
        }
        return false;
      },
      statementsTotal: this.statements,
    };
  }
}
