// The in-process message broker behind the embedded bus: one per process by default, shared by
// every service the all-in-one launcher starts, with NATS routing semantics (wildcards, queue groups).
import type { Reply } from '../delivery';
import { subjectMatches } from '../subjects';
import type { BusMessage } from '../types';
import { EmbeddedBucket } from './bucket';

/** Where a request's first reply goes; undefined for a plain publish. */
export type ReplySink = (reply: Reply) => void;

export interface BrokerDelivery {
  readonly msg: BusMessage;
  readonly reply: ReplySink | undefined;
}

/** One subscription registered with the broker. */
export interface BrokerSubscriber {
  readonly pattern: string;
  /** Queue group name; each message goes to one member of a group. */
  readonly queue: string | undefined;
  deliver(delivery: BrokerDelivery): void;
}

export interface EmbeddedBrokerLimits {
  /** Messages waiting per subscription or watch before new ones are dropped (NATS's slow consumer). */
  readonly maxPendingPerSubscription: number;
}

export class EmbeddedBroker {
  readonly limits: EmbeddedBrokerLimits;
  private readonly subscribers = new Set<BrokerSubscriber>();
  private readonly buckets = new Map<string, EmbeddedBucket>();
  private readonly roundRobin = new Map<string, number>();

  constructor(limits: Partial<EmbeddedBrokerLimits> = {}) {
    this.limits = { maxPendingPerSubscription: limits.maxPendingPerSubscription ?? 65_536 };
  }

  add(subscriber: BrokerSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /** Routes a message; returns how many subscribers it reached (0 means no responders). */
  dispatch(delivery: BrokerDelivery): number {
    const groups = new Map<string, BrokerSubscriber[]>();
    let reached = 0;
    for (const sub of this.subscribers) {
      if (!subjectMatches(sub.pattern, delivery.msg.subject)) continue;
      if (sub.queue === undefined) {
        sub.deliver(delivery);
        reached++;
        continue;
      }
      const group = `${sub.pattern}\u0000${sub.queue}`;
      const members = groups.get(group);
      if (members) members.push(sub);
      else groups.set(group, [sub]);
    }
    for (const [group, members] of groups) {
      const turn = this.roundRobin.get(group) ?? 0;
      this.roundRobin.set(group, (turn + 1) % members.length);
      (members[turn % members.length] as BrokerSubscriber).deliver(delivery);
      reached++;
    }
    return reached;
  }

  bucket(name: string, history: number): EmbeddedBucket {
    let bucket = this.buckets.get(name);
    if (!bucket) {
      bucket = new EmbeddedBucket(name, history);
      this.buckets.set(name, bucket);
    }
    return bucket;
  }
}

let shared: EmbeddedBroker | undefined;

/** The process-wide broker every embedded bus uses unless given its own. */
export function sharedEmbeddedBroker(): EmbeddedBroker {
  shared ??= new EmbeddedBroker();
  return shared;
}
