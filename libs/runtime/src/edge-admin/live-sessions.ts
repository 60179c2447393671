// An edge process's live client sessions as the admin interface sees them: their snapshots for
// GET /sessions and an operator's kill by id. Each edge adds its sessions of every mode.
import type { SessionSnapshot } from './session-report';

/** What a session of any edge and mode offers the admin interface. */
export interface AdminSession {
  readonly adminId: string;
  describe(): SessionSnapshot;
  /** Closes the session; the client is told `reason` where its protocol stream allows. */
  terminate(reason: string): void;
}

export class LiveSessions {
  private readonly live = new Set<AdminSession>();

  add(session: AdminSession): void {
    this.live.add(session);
  }

  delete(session: AdminSession): void {
    this.live.delete(session);
  }

  snapshots(): SessionSnapshot[] {
    return [...this.live].map((s) => s.describe());
  }

  /** Terminates the session with `id`; false when this process has none. */
  kill(id: string, reason: string): boolean {
    for (const session of this.live) {
      if (session.adminId !== id) continue;
      session.terminate(reason);
      return true;
    }
    return false;
  }
}
