import { DEFAULT_RESP_LIMITS, resolveLimits } from './limits';

describe('resolveLimits', () => {
  it('defaults to Redis bounds', () => {
    expect(DEFAULT_RESP_LIMITS).toEqual({
      maxBulkLength: 512 * 1024 * 1024,
      maxMultibulkLength: 1024 * 1024,
      maxAggregateLength: 0x7fffffff,
      maxNestingDepth: 10_000,
      queryBufferLimit: 1024 * 1024 * 1024,
      replyBufferLimit: 1024 * 1024 * 1024,
      maxInlineLength: 64 * 1024,
    });
    expect(resolveLimits({ maxInlineLength: 10 })).toEqual({ ...DEFAULT_RESP_LIMITS, maxInlineLength: 10 });
  });

  it('rejects bounds that are not positive 31-bit integers', () => {
    for (const bad of [0, -1, 1.5, NaN, 2 ** 31]) {
      expect(() => resolveLimits({ maxBulkLength: bad })).toThrow(expect.objectContaining({ code: 'DBP_ERR_RESP_INVALID_LIMIT' }));
    }
  });
});
