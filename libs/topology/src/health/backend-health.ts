// The health state of one backend: up/down with hysteresis (failures_before_down,
// successes_before_up), replication lag and the lag policy, and the last check result.
import { channel } from 'node:diagnostics_channel';
import type { BackendRole } from '@dbproxy/bus';
import { Channels, transitionTally } from '@dbproxy/util';
import type { CheckResult } from '../checks/types';
import type { PositionTimeline } from './position-timeline';

export type HealthState = 'unchecked' | 'up' | 'down';

export interface Thresholds {
  readonly failuresBeforeDown: number;
  readonly successesBeforeUp: number;
}

export interface LagVerdict {
  readonly lagSeconds: number | null;
  readonly lagging: boolean;
  readonly reason?: string;
}

const transitions = channel(Channels.stateTransition);
const tally = transitionTally('backend-health');

/**
 * The lag policy: a replica is lagging when its replication stopped, when its lag is unknown, or
 * when the lag exceeds `maxLagSeconds`; it is back as soon as a check finds it within the limit.
 * Lag is what the server reports (Seconds_Behind_Master), else the primary's position timeline,
 * else what the replica alone shows.
 */
export function judgeLag(result: CheckResult, timeline: PositionTimeline | undefined, maxLagSeconds: number): LagVerdict {
  const replica = result.replica;
  if (!replica) return { lagSeconds: null, lagging: true, reason: `not replicating (the server reports itself ${result.roleObserved})` };
  const lagSeconds = replica.reportedLagSeconds ?? timeline?.stalenessSeconds(result.progress, result.checkedAt) ?? replica.fallbackLagSeconds;
  if (replica.stopped) return { lagSeconds, lagging: true, reason: replica.stoppedReason ?? 'replication stopped' };
  if (lagSeconds === null) return { lagSeconds, lagging: true, reason: 'replication lag unknown' };
  if (lagSeconds > maxLagSeconds) return { lagSeconds, lagging: true, reason: `lag ${lagSeconds.toFixed(1)} s exceeds ${maxLagSeconds} s` };
  return { lagSeconds, lagging: false };
}

export class BackendHealth {
  private state: HealthState = 'unchecked';
  private failures = 0;
  private successes = 0;
  private lag: LagVerdict = { lagSeconds: null, lagging: false };
  private result: CheckResult | undefined;
  checks = 0;

  constructor(readonly id: string) {}

  get up(): boolean {
    return this.state === 'up';
  }

  get checked(): boolean {
    return this.state !== 'unchecked';
  }

  get health(): HealthState {
    return this.state;
  }

  get last(): CheckResult | undefined {
    return this.result;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  get lagVerdict(): LagVerdict {
    return this.lag;
  }

  /** Applies one check; the first result decides at once, later ones through the thresholds. */
  record(result: CheckResult, thresholds: Thresholds): void {
    this.checks++;
    this.result = result;
    if (result.ok) {
      this.failures = 0;
      this.successes++;
      if (this.state === 'unchecked' || (this.state === 'down' && this.successes >= thresholds.successesBeforeUp)) this.transition('up', 'check passed');
    } else {
      this.successes = 0;
      this.failures++;
      const reason = result.error ?? 'check failed';
      if (this.state === 'unchecked' || (this.state === 'up' && this.failures >= thresholds.failuresBeforeDown)) this.transition('down', reason);
    }
  }

  /** Re-evaluates lag after a successful check; a primary is never lagging. */
  judge(role: BackendRole, timeline: PositionTimeline | undefined, maxLagSeconds: number): void {
    if (!this.result?.ok) return; // keep the last verdict while the backend cannot be asked
    this.lag = role === 'primary' ? { lagSeconds: null, lagging: false } : judgeLag(this.result, timeline, maxLagSeconds);
  }

  private transition(to: HealthState, reason: string): void {
    const from = this.state;
    this.state = to;
    tally.count(to);
    if (transitions.hasSubscribers) transitions.publish({ kind: 'backend-health', id: this.id, from, to, reason });
  }
}
