// Spec setup shared by the pool's unit tests: Jest fake timers around each test, every pool it made closed after it.
import type { BackendPool } from '../backend-pool';
import type { FakeConnection } from './fake-connection';

/** Installs the hooks; returns `track`, which remembers a made pool so the hook closes it. */
export function closePoolsAfterEach(): <T extends { pool: BackendPool<FakeConnection> }>(made: T) => T {
  const pools: BackendPool<FakeConnection>[] = [];
  beforeEach(() => jest.useFakeTimers());
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
    jest.useRealTimers();
  });
  return (made) => {
    pools.push(made.pool);
    return made;
  };
}

/** Settles create/reset timers (0 ms in the fake factory) and the promises behind them. */
export const settle = (): Promise<void> => jest.advanceTimersByTimeAsync(0);
