// The latest health report of every backend, from topology's `dbproxy.health.<protocol>.<backend>`
// messages, joined with the configured backends for GET /v1/backends.
import { subscribeMessages, Subjects, type Bus, type HealthReport, type Subscription } from '@dbproxy/bus';
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';

export type Protocol = HealthReport['protocol'];

export interface BackendView {
  readonly name: string;
  readonly protocol: Protocol;
  readonly address: string;
  readonly role: 'primary' | 'replica';
  readonly shard: string;
  readonly status: 'online' | 'offline_soft' | 'offline_hard';
  readonly health: 'up' | 'down' | 'unknown';
  readonly latency_ms: number | null;
  readonly lag_seconds: number | null;
  /** Replication position at the last check: GTID set (MariaDB gtid_current_pos), LSN (PostgreSQL replay/current WAL), offset (Redis). */
  readonly position: string | null;
  readonly checked_at: string | null;
  readonly error: string | null;
}

export const BACKEND_SECTIONS = { mysql: 'mysql_backends', postgres: 'postgres_backends', redis: 'redis_backends' } as const;

export class BackendHealthBoard {
  private readonly reports = new Map<string, { report: HealthReport; receivedAt: number }>();

  /** `staleMs`: a backend without a report for this long has health `unknown`. */
  constructor(private readonly staleMs: () => number) {}

  start(bus: Bus): Subscription {
    return subscribeMessages(bus, Subjects.health.pattern(), (report) => {
      this.reports.set(`${report.protocol}/${report.backend}`, { report, receivedAt: Date.now() });
    });
  }

  /** Every configured backend with its latest report (health `unknown` when none is recent). */
  view(config: DeepReadonly<DbproxyConfig>, now = Date.now()): BackendView[] {
    const out: BackendView[] = [];
    for (const protocol of Object.keys(BACKEND_SECTIONS) as Protocol[]) {
      for (const b of config[BACKEND_SECTIONS[protocol]]) {
        const seen = this.reports.get(`${protocol}/${b.name}`);
        const fresh = seen !== undefined && now - seen.receivedAt <= this.staleMs();
        const report = seen?.report;
        out.push({
          name: b.name,
          protocol,
          address: b.address,
          role: b.role,
          shard: b.shard,
          status: b.status,
          health: !fresh ? 'unknown' : report?.up ? 'up' : 'down',
          latency_ms: fresh ? (report?.latencyMs ?? null) : null,
          lag_seconds: fresh ? (report?.lagSeconds ?? null) : null,
          position: fresh ? (report?.position ?? null) : null,
          checked_at: report?.checkedAt ?? null,
          error: fresh ? (report?.error ?? null) : null,
        });
      }
    }
    return out;
  }
}
