// DBPROXY.SHARD values over value, hash and range maps, shard names without a map, and the
// shard of a client that sends no shard command.
import { validateDocument, type DbproxyConfig } from '@dbproxy/config';
import { ShardSelector } from './shard-selector';

function config(sharding: Record<string, unknown>): DbproxyConfig {
  const result = validateDocument(
    {
      redis: { enabled: true, sharding },
      redis_backends: [
        { name: 'a1', address: '127.0.0.1:7001', role: 'primary', shard: 'a' },
        { name: 'b1', address: '127.0.0.1:7002', role: 'primary', shard: 'b' },
      ],
    },
    {},
  );
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.config;
}

const shardOf = (selector: ShardSelector, value: string): string => {
  const r = selector.resolve(value);
  return r instanceof Error ? `error: ${r.message}` : r;
};

describe('shard selector', () => {
  it('maps values exactly, with the map default', () => {
    const s = new ShardSelector(config({ default_shard: 'a', map: { kind: 'value', values: { eu: 'a', us: 'b' } } }));
    expect(shardOf(s, 'eu')).toBe('a');
    expect(shardOf(s, 'us')).toBe('b');
    expect(shardOf(s, 'asia')).toBe('error: shard value "asia" maps to no shard');
    const withDefault = new ShardSelector(config({ default_shard: 'a', map: { kind: 'value', values: { us: 'b' }, default_shard: 'a' } }));
    expect(shardOf(withDefault, 'asia')).toBe('a');
  });

  it('hashes values and places integers in ranges', () => {
    const hash = new ShardSelector(config({ default_shard: 'a', map: { kind: 'hash', shards: ['a', 'b'] } }));
    expect([shardOf(hash, '0'), shardOf(hash, '1'), shardOf(hash, '-1')]).toEqual(['a', 'b', 'b']);
    const range = new ShardSelector(config({ default_shard: 'a', map: { kind: 'range', ranges: [{ to: 100, shard: 'a' }, { from: 100, to: 200, shard: 'b' }] } }));
    expect([shardOf(range, '99'), shardOf(range, '100'), shardOf(range, '-5')]).toEqual(['a', 'b', 'a']);
    expect(shardOf(range, '200')).toBe('error: shard value "200" maps to no shard');
    expect(shardOf(range, 'x1')).toBe('error: invalid shard value "x1": a range map needs an integer');
  });

  it('takes shard names when there is no map, and applies the missing policy', () => {
    const names = new ShardSelector(config({ default_shard: 'a' }));
    expect(shardOf(names, 'b')).toBe('b');
    expect(shardOf(names, 'c')).toBe('error: shard value "c" maps to no shard');
    expect(shardOf(names, '')).toBe('error: invalid shard value "": empty value');
    expect(names.withoutShardCommand()).toBe('a');
    const refuse = new ShardSelector(config({ default_shard: 'a', missing: 'refuse' }));
    expect(refuse.withoutShardCommand()).toBeInstanceOf(Error);
  });
});
