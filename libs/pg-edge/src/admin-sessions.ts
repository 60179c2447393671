// This pg-edge process's live sessions of both modes for the admin interface: GET /sessions,
// GET /pools (the transaction-mode pools) and an operator's kill.
import type { PoolStats } from '@dbproxy/pool';
import { LiveSessions, poolSnapshotOf, type AdminSession, type SessionSource } from '@dbproxy/runtime';

export type { AdminSession } from '@dbproxy/runtime';

export class AdminSessions {
  private readonly live = new LiveSessions();

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
      sessions: () => this.live.snapshots(),
      pools: () => this.poolStats().map(poolSnapshotOf),
      kill: (id, reason) => this.live.kill(id, reason),
      statementsTotal: this.statements,
    };
  }
}
