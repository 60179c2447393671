// Times an acquire that must fail on an exhausted pool, against a plain timer armed at the same
// moment: on a loaded machine every timer fires late, so the pool is held to ±50 ms of what the
// event loop itself manages, and must never give up early.
import type { BackendPool } from '../src';

export async function expectAcquireTimeout<C>(pool: BackendPool<C>, timeoutMs: number): Promise<Error> {
  const started = performance.now();
  const reference = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now()), timeoutMs));
  const err = await pool.acquire({ timeoutMs }).catch((e: unknown) => e);
  const failedAt = performance.now();
  const timerFiredAt = await reference;
  expect(err).toMatchObject({ code: 'DBP_ERR_POOL_ACQUIRE_TIMEOUT' });
  expect(failedAt - started).toBeGreaterThanOrEqual(timeoutMs - 1);
  expect(Math.abs(failedAt - timerFiredAt)).toBeLessThanOrEqual(50);
  return err as Error;
}
