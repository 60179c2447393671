// StartupShardKey: where the shard comes from, what is refused, and that the parameter never reaches the backend.
import type { StartupMessage } from '@dbproxy/protocol-pg';
import { StartupShardKey, type ShardingConfig } from './startup-shard-key';

const startup = (parameters: Record<string, string>): StartupMessage => ({ type: 'StartupMessage', protocolVersion: 196608, parameters: new Map(Object.entries(parameters)) });
const sharding = (over: Partial<ShardingConfig> = {}): ShardingConfig => ({
  enabled: true,
  parameter: 'dbproxy.shard',
  missing: 'refuse',
  default_shard: 'default',
  map: { kind: 'value', values: { eu: 's-eu', us: 's-us' } },
  rules: [],
  multi_shard: 'reject',
  ...over,
});

describe('StartupShardKey', () => {
  it('reads the parameter and removes it', () => {
    const r = new StartupShardKey(sharding()).resolve(startup({ user: 'u', 'dbproxy.shard': 'eu' }));
    expect(r.ok && r.shard).toBe('s-eu');
    expect(r.ok && [...r.message.parameters.keys()]).toEqual(['user']);
  });

  it('reads -c name=value inside options and keeps the other options', () => {
    const r = new StartupShardKey(sharding()).resolve(startup({ user: 'u', options: '-c dbproxy.shard=us -c search_path=app' }));
    expect(r.ok && r.shard).toBe('s-us');
    expect(r.ok && r.message.parameters.get('options')).toBe('-c search_path=app');
  });

  it.each([
    ['missing', {}, 'DBP_ERR_PGEDGE_SHARD_MISSING'],
    ['unmapped', { 'dbproxy.shard': 'mars' }, 'DBP_ERR_PGEDGE_SHARD_UNKNOWN'],
    ['empty', { 'dbproxy.shard': '' }, 'DBP_ERR_PGEDGE_SHARD_INVALID'],
  ])('refuses a %s value', (_what, extra, code) => {
    const r = new StartupShardKey(sharding()).resolve(startup({ user: 'u', ...extra }));
    expect(r.ok).toBe(false);
    expect(!r.ok && (r.error as { code?: string }).code).toBe(code);
  });

  it('uses default_shard when missing = "default", and a configured parameter name', () => {
    const key = new StartupShardKey(sharding({ missing: 'default', parameter: 'app.tenant', map: { kind: 'hash', shards: ['a', 'b'] } }));
    expect(key.resolve(startup({ user: 'u' }))).toMatchObject({ ok: true, shard: 'default' });
    expect(key.resolve(startup({ 'app.tenant': '3' }))).toMatchObject({ ok: true, shard: 'b' });
  });

  it('refuses non-integers for a range map', () => {
    const key = new StartupShardKey(sharding({ map: { kind: 'range', ranges: [{ from: 0n, to: 100n, shard: 'low' }] } }));
    expect(key.resolve(startup({ 'dbproxy.shard': '42' }))).toMatchObject({ ok: true, shard: 'low' });
    expect(key.resolve(startup({ 'dbproxy.shard': 'x' }))).toMatchObject({ ok: false });
  });

  it('with sharding off serves default_shard and still strips a stray parameter', () => {
    const r = new StartupShardKey(sharding({ enabled: false })).resolve(startup({ user: 'u', 'dbproxy.shard': 'eu' }));
    expect(r).toMatchObject({ ok: true, shard: 'default' });
    expect(r.ok && r.message.parameters.has('dbproxy.shard')).toBe(false);
  });
});
