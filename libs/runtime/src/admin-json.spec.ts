import { snakeCaseKey, snakeCaseKeys } from './admin-json';

describe('snakeCaseKeys', () => {
  it('converts camelCase keys at every depth, in arrays too', () => {
    expect(snakeCaseKeys({ inDoubt: [{ formatId: 1, lastCheck: { checkedAt: 'x', latencyMs: 2 } }], coordinator: 'c' })).toEqual({
      in_doubt: [{ format_id: 1, last_check: { checked_at: 'x', latency_ms: 2 } }],
      coordinator: 'c',
    });
  });

  it('keeps the keys of data-keyed maps and converts the values under them', () => {
    const body = { overlay: { dnsPins: { 'ordersBlue.example': '10.0.0.1' }, movedWriters: { shardOne: { configuredPrimary: 'a' } } } };
    expect(snakeCaseKeys(body, new Set(['dns_pins', 'moved_writers']))).toEqual({
      overlay: { dns_pins: { 'ordersBlue.example': '10.0.0.1' }, moved_writers: { shardOne: { configured_primary: 'a' } } },
    });
  });

  it('leaves snake_case, acronyms and non-plain values alone', () => {
    expect(snakeCaseKey('max_lag_seconds')).toBe('max_lag_seconds');
    expect(snakeCaseKey('roleObserved')).toBe('role_observed');
    expect(snakeCaseKey('dnsPin')).toBe('dns_pin');
    expect(snakeCaseKey('XAState')).toBe('xa_state');
    expect(snakeCaseKeys(['a', 1, null, true])).toEqual(['a', 1, null, true]);
  });
});
