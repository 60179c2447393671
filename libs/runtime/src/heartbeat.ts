// Edge heartbeats on `dbproxy.edges.heartbeat`, read by config-api for GET /v1/edges.
import { publishMessage, Subjects, type Bus } from '@dbproxy/bus';
import type { ConfigSource } from './config-follower';
import type { RunningService } from './service';

export interface HeartbeatOptions {
  readonly bus: Bus;
  readonly config: ConfigSource;
  readonly instanceId: string;
  readonly version: string;
  readonly adminAddress: string;
  readonly intervalMs: number;
  readonly services: readonly RunningService[];
}

/** Publishes one heartbeat per edge service now and every interval; returns a stop function. */
export function startHeartbeats(opts: HeartbeatOptions): () => void {
  const startedAt = new Date().toISOString();
  const beat = () => {
    for (const service of opts.services) {
      const status = service.edgeStatus?.();
      if (!status) continue;
      publishMessage(opts.bus, Subjects.edgeHeartbeat, {}, {
        instanceId: opts.instanceId,
        protocol: status.protocol,
        epoch: opts.config.current().epoch,
        sessions: status.sessions,
        version: opts.version,
        adminAddress: opts.adminAddress,
        startedAt,
        sentAt: new Date().toISOString(),
      });
    }
  };
  beat();
  const timer = setInterval(beat, opts.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
