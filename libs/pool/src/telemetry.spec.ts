// What the pool publishes on node:diagnostics_channel for libs/observability.
import { channel } from 'node:diagnostics_channel';
import { Channels } from '@dbproxy/util';
import { fakePool } from './testing';
import { isLegalTransition, type ConnectionState, type PoolConnectionTransition } from './pooled-connection';
import type { PoolEvent } from './pool-counters';

const transitions: PoolConnectionTransition[] = [];
const events: PoolEvent[] = [];
const onTransition = (m: unknown) => transitions.push(m as PoolConnectionTransition);
const onEvent = (m: unknown) => events.push(m as PoolEvent);

beforeEach(() => {
  jest.useFakeTimers();
  transitions.length = 0;
  events.length = 0;
  channel(Channels.stateTransition).subscribe(onTransition);
  channel(Channels.poolEvent).subscribe(onEvent);
});
afterEach(() => {
  channel(Channels.stateTransition).unsubscribe(onTransition);
  channel(Channels.poolEvent).unsubscribe(onEvent);
  jest.useRealTimers();
});

const settle = () => jest.advanceTimersByTimeAsync(0);

describe('state transitions', () => {
  it('publishes every move of a connection with its id, states and reason', async () => {
    const { pool } = fakePool({ max: 1 });
    const lease = await pool.acquire();
    pool.release(lease, { reusable: true });
    await settle();
    pool.release(await pool.acquire(), { reusable: true });
    pool.retire('switchover');
    await settle();
    await pool.close();
    const id = lease.connectionId;
    expect(transitions).toEqual([
      { kind: 'pool-connection', id, pool: 'fake-primary', from: 'creating', to: 'idle', reason: 'connected' },
      { kind: 'pool-connection', id, pool: 'fake-primary', from: 'idle', to: 'in_use', reason: 'acquire' },
      { kind: 'pool-connection', id, pool: 'fake-primary', from: 'in_use', to: 'resetting', reason: 'released' },
      { kind: 'pool-connection', id, pool: 'fake-primary', from: 'resetting', to: 'idle', reason: 'reset' },
      { kind: 'pool-connection', id, pool: 'fake-primary', from: 'idle', to: 'in_use', reason: 'acquire' },
      { kind: 'pool-connection', id, pool: 'fake-primary', from: 'in_use', to: 'resetting', reason: 'released' },
      { kind: 'pool-connection', id, pool: 'fake-primary', from: 'resetting', to: 'retiring', reason: 'switchover' },
      { kind: 'pool-connection', id, pool: 'fake-primary', from: 'retiring', to: 'closed', reason: 'switchover' },
    ]);
  });

  it('only ever publishes moves of the documented state machine', async () => {
    const { pool, factory } = fakePool({ max: 2, reserved: 1 });
    const leases = await Promise.all([pool.acquire(), pool.acquire({ reserved: true }), pool.acquire()]);
    pool.release(leases[0], { reusable: false });
    pool.retire('r');
    factory.failResets = 1;
    pool.release(leases[1], { reusable: true });
    await settle();
    await pool.drain({ deadlineMs: 0 });
    expect(transitions.length).toBeGreaterThan(5);
    for (const t of transitions) expect([t.from, t.to, isLegalTransition(t.from, t.to)]).toEqual([t.from, t.to, true]);
    const states: ConnectionState[] = ['creating', 'idle', 'in_use', 'resetting', 'retiring', 'closed'];
    expect(states.filter((s) => isLegalTransition('closed', s))).toEqual([]);
  });
});

describe('pool events', () => {
  it('publishes acquires with their wait and timeouts', async () => {
    const { pool } = fakePool({ max: 1, acquireTimeoutMs: 200 });
    const lease = await pool.acquire();
    const late = pool.acquire().catch(() => undefined);
    await jest.advanceTimersByTimeAsync(200);
    await late;
    const waiting = pool.acquire();
    await jest.advanceTimersByTimeAsync(30);
    pool.release(lease, { reusable: true });
    await settle();
    await waiting;
    await pool.close();
    expect(events.filter((e) => e.event !== 'drain')).toEqual([
      { pool: 'fake-primary', event: 'acquire', waitMs: expect.any(Number) },
      { pool: 'fake-primary', event: 'acquire-timeout', waitMs: 200 },
      { pool: 'fake-primary', event: 'acquire', waitMs: 30 },
    ]);
  });

  it('publishes queue-full, aborts, create and reset failures', async () => {
    const { pool, factory } = fakePool({ max: 1, maxWaiters: 1 });
    factory.failCreates = 1;
    await pool.acquire().catch(() => undefined);
    const lease = await pool.acquire();
    const client = new AbortController();
    const gone = pool.acquire({ signal: client.signal }).catch(() => undefined);
    await pool.acquire().catch(() => undefined);
    client.abort();
    await gone;
    factory.failResets = 1;
    pool.release(lease, { reusable: true });
    await settle();
    await pool.close();
    expect(events.map((e) => e.event)).toEqual(['create-failed', 'acquire', 'queue-full', 'acquire-aborted', 'reset-failed', 'drain']);
  });
});
