// Shard maps: hash placement, half-open signed ranges with exact bigints, exact values, spec validation.
import fc from 'fast-check';
import { createShardMap, shardMapFromSettings } from './shard-map';
import { fnv1a64 } from './fnv';

describe('hash shard map', () => {
  const map = createShardMap({ kind: 'hash', shards: ['s0', 's1', 's2'] });

  it('places integers by Euclidean modulo, whatever their type', () => {
    expect(map.shardFor(7)).toBe('s1');
    expect(map.shardFor(7n)).toBe('s1');
    expect(map.shardFor('7')).toBe('s1');
    expect(map.shardFor('+7')).toBe('s1');
    expect(map.shardFor('007')).toBe('s1');
    expect(map.shardFor(-1)).toBe('s2');
    expect(map.shardFor(-1n)).toBe('s2');
    expect(map.shardFor('-4')).toBe('s2');
    expect(map.shardFor(0)).toBe('s0');
  });

  it('handles integers beyond 2^53 exactly', () => {
    const big = 2n ** 64n + 1n; // 18446744073709551617 = 3 * 6148914691236517205 + 2
    expect(map.shardFor(big)).toBe('s2');
    expect(map.shardFor(big.toString())).toBe('s2');
  });

  it('places other strings by FNV-1a 64 of their UTF-8 bytes modulo the shard count', () => {
    for (const key of ['alice', 'bob', 'émile', '12a', ' 12', '1.5', '']) {
      expect(map.shardFor(key)).toBe(`s${Number(fnv1a64(key) % 3n)}`);
    }
  });

  it('agrees across number, bigint and string spellings for every safe integer', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        const shard = map.shardFor(n);
        expect(map.shardFor(BigInt(n))).toBe(shard);
        expect(map.shardFor(String(n))).toBe(shard);
      }),
    );
  });

  it('refuses numbers it cannot place exactly', () => {
    expect(() => map.shardFor(1.5)).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_KEY' }));
    expect(() => map.shardFor(2 ** 60)).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_KEY' }));
    expect(() => map.shardFor(Number.NaN)).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_KEY' }));
  });

  it('needs at least one named shard', () => {
    expect(() => createShardMap({ kind: 'hash', shards: [] })).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_SPEC' }));
    expect(() => createShardMap({ kind: 'hash', shards: [''] })).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_SPEC' }));
  });
});

describe('range shard map', () => {
  const map = createShardMap({
    kind: 'range',
    ranges: [
      { to: -100n, shard: 'neg' },
      { from: 0n, to: 1000n, shard: 'low' },
      { from: 1000n, to: 2n ** 63n, shard: 'high' },
    ],
  });

  it('uses half-open bounds', () => {
    expect(map.shardFor(0)).toBe('low');
    expect(map.shardFor(999)).toBe('low');
    expect(map.shardFor(1000)).toBe('high');
    expect(map.shardFor(-101)).toBe('neg');
    expect(map.shardFor('-100')).toBeUndefined();
    expect(map.shardFor(-1)).toBeUndefined();
  });

  it('compares exact bigints at the edges', () => {
    expect(map.shardFor(2n ** 63n - 1n)).toBe('high');
    expect(map.shardFor((2n ** 63n - 1n).toString())).toBe('high');
    expect(map.shardFor(2n ** 63n)).toBeUndefined();
    expect(map.shardFor(-(2n ** 70n))).toBe('neg');
  });

  it('leaves non-integer strings unmapped', () => {
    expect(map.shardFor('abc')).toBeUndefined();
    expect(map.shardFor('1.0')).toBeUndefined();
  });

  it('lists its shards once each', () => {
    expect(map.shards).toEqual(['neg', 'low', 'high']);
  });

  it('rejects empty and overlapping ranges', () => {
    expect(() => createShardMap({ kind: 'range', ranges: [{ from: 5n, to: 5n, shard: 'a' }] })).toThrow(
      expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_SPEC' }),
    );
    expect(() =>
      createShardMap({
        kind: 'range',
        ranges: [
          { from: 0n, to: 10n, shard: 'a' },
          { from: 9n, shard: 'b' },
        ],
      }),
    ).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_RANGE_OVERLAP' }));
    expect(() => createShardMap({ kind: 'range', ranges: [{ shard: 'a' }, { to: 3n, shard: 'b' }] })).toThrow(
      expect.objectContaining({ code: 'DBP_ERR_ROUTING_RANGE_OVERLAP' }),
    );
  });

  it('maps every integer to the range that contains it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), (k) => {
        const expected = k < -100n ? 'neg' : k >= 0n && k < 1000n ? 'low' : k >= 1000n && k < 2n ** 63n ? 'high' : undefined;
        expect(map.shardFor(k)).toBe(expected);
      }),
    );
  });
});

describe('value shard map', () => {
  it('looks values up exactly, falling back to the default shard', () => {
    const map = createShardMap({ kind: 'value', values: { eu: 's-eu', us: 's-us', '42': 's-us' }, defaultShard: 's-eu' });
    expect(map.shardFor('eu')).toBe('s-eu');
    expect(map.shardFor('us')).toBe('s-us');
    expect(map.shardFor(42)).toBe('s-us');
    expect(map.shardFor(42n)).toBe('s-us');
    expect(map.shardFor('EU')).toBe('s-eu'); // unmapped, so the default
    expect([...map.shards].sort()).toEqual(['s-eu', 's-us']);
  });

  it('leaves unknown values unmapped without a default', () => {
    const map = createShardMap({ kind: 'value', values: { eu: 's-eu' } });
    expect(map.shardFor('us')).toBeUndefined();
  });

  it('rejects an empty map without a default', () => {
    expect(() => createShardMap({ kind: 'value', values: {} })).toThrow(expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_SPEC' }));
  });
});

describe('shard maps from configuration settings', () => {
  it('builds the same maps as the spec form, default shard and half-open ranges included', () => {
    const value = shardMapFromSettings({ kind: 'value', values: { eu: 's-eu' }, default_shard: 's-other' });
    expect([value.shardFor('eu'), value.shardFor('us')]).toEqual(['s-eu', 's-other']);
    const range = shardMapFromSettings({ kind: 'range', ranges: [{ to: 1000n, shard: 'a' }, { from: 1000n, shard: 'b' }] });
    expect([range.shardFor('999'), range.shardFor('1000'), range.shardFor(-5)]).toEqual(['a', 'b', 'a']);
    const hash = shardMapFromSettings({ kind: 'hash', shards: ['h0', 'h1'] });
    const spec = createShardMap({ kind: 'hash', shards: ['h0', 'h1'] });
    for (const key of ['7', 'user-42', 123]) expect(hash.shardFor(key)).toBe(spec.shardFor(key));
  });

  it('validates like createShardMap', () => {
    expect(() => shardMapFromSettings({ kind: 'range', ranges: [{ to: 10n, shard: 'a' }, { to: 20n, shard: 'b' }] })).toThrow();
  });
});
