// Unit tests of waitFor and withTimeout.
import { DbproxyError } from '@dbproxy/util';
import { sleep, waitFor, withTimeout } from './wait';

describe('waitFor', () => {
  it('resolves with the first value that is not false, null or undefined', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? { calls } : undefined), { intervalMs: 1 });
    expect(value).toEqual({ calls: 3 });
  });

  it('treats a throwing probe as not ready yet', async () => {
    let calls = 0;
    const value = await waitFor(
      async () => {
        calls += 1;
        if (calls < 3) throw new Error('not yet');
        return 'ok';
      },
      { intervalMs: 1 },
    );
    expect(value).toBe('ok');
  });

  it('accepts 0 and empty strings as values', async () => {
    expect(await waitFor(() => 0)).toBe(0);
    expect(await waitFor(() => '')).toBe('');
  });

  it('times out with DBP_ERR_TESTING_WAIT_TIMEOUT, naming what it waited for, with the last error as cause', async () => {
    const last = new Error('still down');
    const failure = await waitFor(
      () => {
        throw last;
      },
      { timeoutMs: 30, intervalMs: 5, description: 'the replica' },
    ).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DbproxyError);
    expect(failure).toMatchObject({
      code: 'DBP_ERR_TESTING_WAIT_TIMEOUT',
      message: 'timed out after 30 ms waiting for the replica',
      cause: last,
    });
  });
});

describe('withTimeout', () => {
  it('passes a value through when the promise settles in time', async () => {
    await expect(withTimeout(Promise.resolve(7), 100)).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('own')), 100)).rejects.toThrow('own');
  });

  it('rejects with DBP_ERR_TESTING_WAIT_TIMEOUT when the promise is too slow', async () => {
    await expect(withTimeout(sleep(200), 10, 'a slow thing')).rejects.toMatchObject({
      code: 'DBP_ERR_TESTING_WAIT_TIMEOUT',
      message: 'timed out after 10 ms waiting for a slow thing',
    });
  });
});
