// Up/down hysteresis, state-transition events and the lag policy.
import { channel } from 'node:diagnostics_channel';
import { Channels } from '@dbproxy/util';
import { failedCheck, type CheckResult, type ReplicaObservation } from '../checks/types';
import { BackendHealth, judgeLag } from './backend-health';
import { PositionTimeline } from './position-timeline';

const ok = (replica: ReplicaObservation | null = null, progress: bigint | null = null, checkedAt = Date.now()): CheckResult => ({
  ok: true,
  latencyMs: 1,
  roleObserved: replica ? 'replica' : 'primary',
  position: progress?.toString() ?? null,
  progress,
  replica,
  checkedAt,
});
const streaming: ReplicaObservation = { stopped: false, reportedLagSeconds: null, fallbackLagSeconds: 0 };
const thresholds = { failuresBeforeDown: 2, successesBeforeUp: 2 };

describe('BackendHealth', () => {
  it('is decided by its first check, then needs failures_before_down / successes_before_up in a row', () => {
    const health = new BackendHealth('mysql/db1');
    expect([health.checked, health.up]).toEqual([false, false]);
    health.record(ok(), thresholds);
    expect(health.up).toBe(true);
    health.record(failedCheck('refused'), thresholds);
    expect(health.up).toBe(true);
    health.record(ok(), thresholds); // a success resets the failure count
    health.record(failedCheck('refused'), thresholds);
    expect(health.up).toBe(true);
    health.record(failedCheck('refused'), thresholds);
    expect([health.health, health.consecutiveFailures]).toEqual(['down', 2]);
    health.record(ok(), thresholds);
    expect(health.up).toBe(false);
    health.record(ok(), thresholds);
    expect(health.up).toBe(true);
    expect(health.checks).toBe(7);
  });

  it('starts down when its first check fails', () => {
    const health = new BackendHealth('redis/r1');
    health.record(failedCheck('timeout'), thresholds);
    expect(health.health).toBe('down');
  });

  it('reports each transition on the state-transition channel', () => {
    const seen: unknown[] = [];
    const listener = (m: unknown) => seen.push(m);
    channel(Channels.stateTransition).subscribe(listener);
    try {
      const health = new BackendHealth('postgres/pg1');
      health.record(ok(), { failuresBeforeDown: 1, successesBeforeUp: 1 });
      health.record(failedCheck('connect ECONNREFUSED'), { failuresBeforeDown: 1, successesBeforeUp: 1 });
    } finally {
      channel(Channels.stateTransition).unsubscribe(listener);
    }
    expect(seen).toEqual([
      { kind: 'backend-health', id: 'postgres/pg1', from: 'unchecked', to: 'up', reason: 'check passed' },
      { kind: 'backend-health', id: 'postgres/pg1', from: 'up', to: 'down', reason: 'connect ECONNREFUSED' },
    ]);
  });

  it('keeps its lag verdict while checks fail, and never calls a primary lagging', () => {
    const health = new BackendHealth('mysql/r1');
    health.record(ok({ ...streaming, reportedLagSeconds: 50 }), thresholds);
    health.judge('replica', undefined, 10);
    expect(health.lagVerdict.lagging).toBe(true);
    health.record(failedCheck('refused'), thresholds);
    health.judge('replica', undefined, 10);
    expect(health.lagVerdict).toMatchObject({ lagging: true, lagSeconds: 50 });
    health.record(ok({ ...streaming, reportedLagSeconds: 50 }), thresholds);
    health.judge('primary', undefined, 10);
    expect(health.lagVerdict).toEqual({ lagSeconds: null, lagging: false });
  });
});

describe('judgeLag (the lag policy)', () => {
  it('prefers the lag the server reports', () => {
    expect(judgeLag(ok({ ...streaming, reportedLagSeconds: 3 }), undefined, 5)).toEqual({ lagSeconds: 3, lagging: false });
    expect(judgeLag(ok({ ...streaming, reportedLagSeconds: 6 }), undefined, 5)).toMatchObject({ lagSeconds: 6, lagging: true, reason: 'lag 6.0 s exceeds 5 s' });
  });

  it('otherwise measures against the primary position timeline, else the replica own view', () => {
    const timeline = new PositionTimeline();
    timeline.record(100n, 1_000);
    timeline.record(200n, 2_000);
    expect(judgeLag(ok(streaming, 100n, 9_000), timeline, 5)).toMatchObject({ lagSeconds: 7, lagging: true });
    expect(judgeLag(ok(streaming, 200n, 9_000), timeline, 5)).toEqual({ lagSeconds: 0, lagging: false });
    expect(judgeLag(ok({ ...streaming, fallbackLagSeconds: 2 }, 100n), undefined, 5)).toEqual({ lagSeconds: 2, lagging: false });
  });

  it('counts stopped replication, unknown lag and a replica that replicates from nobody as lagging', () => {
    expect(judgeLag(ok({ ...streaming, stopped: true, stoppedReason: 'WAL replay is paused' }), undefined, 5)).toMatchObject({ lagging: true, reason: 'WAL replay is paused' });
    expect(judgeLag(ok({ ...streaming, fallbackLagSeconds: null }), undefined, 5)).toMatchObject({ lagging: true, reason: 'replication lag unknown' });
    expect(judgeLag(ok(null), undefined, 5)).toMatchObject({ lagging: true, reason: 'not replicating (the server reports itself primary)' });
  });
});
