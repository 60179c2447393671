// Live edge instances, from their heartbeats; an instance silent for the TTL is forgotten.
import { subscribeMessages, Subjects, type Bus, type EdgeHeartbeat, type Subscription } from '@dbproxy/bus';

export interface EdgeInstance extends EdgeHeartbeat {
  readonly lastSeen: string;
}

export class EdgeRegistry {
  private readonly edges = new Map<string, { heartbeat: EdgeHeartbeat; seenAt: number }>();
  private subscription: Subscription | undefined;

  constructor(private readonly ttlMs: () => number) {}

  start(bus: Bus): Subscription {
    this.subscription = subscribeMessages(bus, Subjects.edgeHeartbeat.pattern(), (heartbeat) => {
      this.edges.set(`${heartbeat.instanceId}/${heartbeat.protocol}`, { heartbeat, seenAt: Date.now() });
    });
    return this.subscription;
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  live(now = Date.now()): EdgeInstance[] {
    const out: EdgeInstance[] = [];
    for (const [key, { heartbeat, seenAt }] of this.edges) {
      if (now - seenAt > this.ttlMs()) this.edges.delete(key);
      else out.push({ ...heartbeat, lastSeen: new Date(seenAt).toISOString() });
    }
    return out.sort((a, b) => a.instanceId.localeCompare(b.instanceId) || a.protocol.localeCompare(b.protocol));
  }
}
