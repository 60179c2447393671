// Turns what libraries publish on node:diagnostics_channel into log lines and metrics.
import { channel } from 'node:diagnostics_channel';
import { Channels, transitionTallies, type TransitionTally } from '@dbproxy/util';
import type { Logger } from './logging';
import type { MetricsRegistry } from './metrics';
import { logOperationalEvents } from './operations-log';

interface DroppedMessage {
  subject?: string;
  reason?: string;
}

interface StateTransition {
  kind?: string;
  id?: string | number;
  from?: string;
  to?: string;
  reason?: string;
}

const asRecord = (message: unknown): Record<string, unknown> => (message !== null && typeof message === 'object' ? (message as Record<string, unknown>) : {});

export interface ObserveOptions {
  /** Operational lines (sessions, logins, backend health) per kind per second; 0 = no limit. Read per line. */
  readonly logRateLimitPerSecond?: () => number;
}

/** Subscribes the process's logger and metrics to every library channel; returns an unsubscribe. */
export function observeLibraryChannels(logger: Logger, metrics: MetricsRegistry, opts: ObserveOptions = {}): () => void {
  const dropped = metrics.counter({ name: 'dbproxy_bus_messages_dropped_total', help: 'Bus messages dropped: malformed, failed handler or undeliverable', labelNames: ['reason'] });
  // Transitions come several per query: the machines count them in their kind's tally (one add
  // per move), and the counter takes the growth since its last read when Prometheus scrapes.
  const reported = new Map<TransitionTally, Map<string, number>>();
  metrics.counter({
    name: 'dbproxy_state_transitions_total',
    help: 'State machine transitions by kind and target state',
    labelNames: ['kind', 'to'],
    collect() {
      for (const tally of transitionTallies()) {
        let seen = reported.get(tally);
        if (seen === undefined) reported.set(tally, (seen = new Map()));
        for (const [to, n] of tally.entries()) {
          const grown = n - (seen.get(to) ?? 0);
          if (grown === 0) continue;
          this.inc({ kind: tally.kind, to }, grown);
          seen.set(to, n);
        }
      }
    },
  });

  const rejected = metrics.counter({ name: 'dbproxy_bus_rejected_total', help: 'Signed bus messages refused: sender not the owning service, bad signature, stale or replayed', labelNames: ['subject_kind', 'reason'] });
  // At most one warning per kind and reason every 10 s: a flood of forged messages must not flood the log.
  const lastWarned = new Map<string, { at: number; suppressed: number }>();
  const onRejected = (message: unknown) => {
    const m = asRecord(message);
    const kind = String(m['kind'] ?? 'unknown');
    const reason = String(m['reason'] ?? 'unknown');
    rejected.inc({ subject_kind: kind, reason });
    const key = `${kind}/${reason}`;
    const last = lastWarned.get(key);
    const now = Date.now();
    if (last && now - last.at < 10_000) {
      last.suppressed++;
      return;
    }
    lastWarned.set(key, { at: now, suppressed: 0 });
    logger.warn({ subject: m['subject'], kind, reason, detail: m['detail'], suppressedSinceLast: last?.suppressed ?? 0 }, 'bus message refused: sender not verified');
  };
  const onDropped = (message: unknown) => {
    const m = asRecord(message) as DroppedMessage;
    dropped.inc({ reason: String(m.reason ?? 'unknown').split(':')[0] });
    logger.warn({ subject: m.subject, reason: m.reason }, 'bus message dropped');
  };
  const onTransition = (message: unknown) => {
    const m = asRecord(message) as StateTransition;
    logger.debug({ kind: m.kind, id: m.id, from: m.from, to: m.to, reason: m.reason }, 'state transition');
  };
  const subscriptions: [string, (message: unknown) => void][] = [
    [Channels.busMessageDropped, onDropped],
    [Channels.busMessageRejected, onRejected],
  ];
  // Each move's details only reach the debug log, and the level is fixed at start: below debug,
  // nobody subscribes, so the machines build no message per move.
  if (logger.isLevelEnabled('debug')) subscriptions.push([Channels.stateTransition, onTransition]);
  for (const [name, fn] of subscriptions) channel(name).subscribe(fn);
  const unlogOperations = logOperationalEvents(logger, opts.logRateLimitPerSecond ?? (() => 0));
  return () => {
    for (const [name, fn] of subscriptions) channel(name).unsubscribe(fn);
    unlogOperations();
  };
}
