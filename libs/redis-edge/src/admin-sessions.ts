// This redis-edge process's live sessions for the admin interface (GET /sessions, GET /pools and an
// operator's kill), the session ids, the pause gate and the command count both modes share.
import { LiveSessions, PauseGate, SessionIds, type AdminSession, type PoolSnapshot, type SessionSource } from '@dbproxy/runtime';

export type { AdminSession } from '@dbproxy/runtime';

const NO_WAITS = { p50: 0, p95: 0, p99: 0 };

export class RedisAdmin {
  readonly ids = new SessionIds('r');
  readonly pause = new PauseGate();
  /** Command-mode commands dispatched since start (connection mode relays bytes unread). */
  commands = 0;
  private readonly live = new LiveSessions();

  constructor(
    /** The configuration epoch new sessions start on. */
    readonly epoch: () => number,
    /** Open backend connections per backend name (redis-edge multiplexes or pipes; it has no pool). */
    private readonly connections: () => ReadonlyMap<string, number>,
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
      pools: () => [...this.connections()].map(([backend, open]): PoolSnapshot => ({ backend, inUse: open, idle: 0, waiters: 0, checkouts: 0, timeouts: 0, resets: 0, waitMs: NO_WAITS })),
      kill: (id, reason) => this.live.kill(id, reason),
      statementsTotal: () => this.commands,
    };
  }
}
