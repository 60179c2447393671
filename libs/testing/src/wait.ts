// Polling and deadlines for tests: waitFor() retries a probe, withTimeout() bounds a promise.
import { WaitTimeout } from './errors';

export interface WaitOptions {
  /** Give up after this long (default 10 000 ms). */
  timeoutMs?: number;
  /** Pause between attempts (default 50 ms). */
  intervalMs?: number;
  /** What is awaited, for the timeout message. */
  description?: string;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Calls `probe` until it returns a value other than `false`, `null` or `undefined`, and resolves
 * with that value. A probe that throws counts as "not yet"; on timeout the last error is the
 * cause of a DBP_ERR_TESTING_WAIT_TIMEOUT error.
 */
export async function waitFor<T>(
  probe: () => T | false | null | undefined | Promise<T | false | null | undefined>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== false && value !== null && value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() + intervalMs > deadline) {
      throw WaitTimeout.withCause(lastError, timeoutMs, options.description ?? 'a condition');
    }
    await sleep(intervalMs);
  }
}

/** Resolves or rejects like `promise`, or rejects with DBP_ERR_TESTING_WAIT_TIMEOUT after `timeoutMs`. */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, description = 'a promise'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(WaitTimeout(timeoutMs, description)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
