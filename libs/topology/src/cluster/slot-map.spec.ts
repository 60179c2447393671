// Redis Cluster slot maps from CLUSTER SHARDS and CLUSTER SLOTS replies.
import { parseClusterShards, parseClusterSlots } from './slot-map';

// Replies as Redis 7.0 sends them (RESP2, via ioredis), with a replica added to the first shard.
const node = (id: string, port: number, role: string, extra: unknown[] = []) => ['id', id, 'port', port, 'ip', '127.0.0.1', 'endpoint', '127.0.0.1', 'role', role, 'replication-offset', 0, 'health', 'online', ...extra];
const SHARDS = [
  ['slots', [5461, 10921], 'nodes', [node('b'.repeat(40), 7002, 'master')]],
  ['slots', [10922, 16383], 'nodes', [node('c'.repeat(40), 7003, 'master')]],
  ['slots', [0, 99, 101, 5460], 'nodes', [node('d'.repeat(40), 7004, 'replica'), node('a'.repeat(40), 7001, 'master')]],
  ['slots', [100, 100], 'nodes', [node('e'.repeat(40), 7005, 'master')]],
  ['slots', [], 'nodes', [node('f'.repeat(40), 7006, 'master')]],
];
const SLOTS = [
  [0, 99, ['127.0.0.1', 7001, 'a'.repeat(40), []], ['127.0.0.1', 7004, 'd'.repeat(40), []]],
  [100, 100, ['127.0.0.1', 7005, 'e'.repeat(40), []]],
  [101, 5460, ['127.0.0.1', 7001, 'a'.repeat(40), []], ['127.0.0.1', 7004, 'd'.repeat(40), []]],
  [5461, 10921, ['127.0.0.1', 7002, 'b'.repeat(40), []]],
  [10922, 16383, ['127.0.0.1', 7003, 'c'.repeat(40), []]],
];

describe('Redis Cluster slot maps', () => {
  it('reads CLUSTER SHARDS: shards sorted by first slot, primary first, slotless nodes left out', () => {
    const layout = parseClusterShards(SHARDS);
    expect(layout.shards.map((s) => [s.name.slice(0, 1), s.slots])).toEqual([
      ['a', [[0, 99], [101, 5460]]],
      ['e', [[100, 100]]],
      ['b', [[5461, 10921]]],
      ['c', [[10922, 16383]]],
    ]);
    expect(layout.shards[0]?.nodes).toEqual([
      { id: 'a'.repeat(40), address: '127.0.0.1:7001', role: 'primary' },
      { id: 'd'.repeat(40), address: '127.0.0.1:7004', role: 'replica' },
    ]);
  });

  it('reads CLUSTER SLOTS into the same layout', () => {
    expect(parseClusterSlots(SLOTS)).toEqual(parseClusterShards(SHARDS));
  });

  it('uses the ip when the endpoint is unknown, brackets IPv6, and merges touching ranges', () => {
    const layout = parseClusterShards([['slots', [0, 10, 11, 20], 'nodes', [['id', 'x'.repeat(40), 'port', 6379, 'ip', '::1', 'endpoint', '?', 'role', 'master']]]]);
    expect(layout.shards[0]).toMatchObject({ slots: [[0, 20]], nodes: [{ address: '[::1]:6379' }] });
  });

  it('refuses malformed replies with DBP_ERR_TOPOLOGY_UNEXPECTED_REPLY', () => {
    expect(() => parseClusterShards('OK')).toThrow(expect.objectContaining({ code: 'DBP_ERR_TOPOLOGY_UNEXPECTED_REPLY' }));
    expect(() => parseClusterShards([['slots']])).toThrow(/key\/value pairs/);
    expect(() => parseClusterShards([['slots', [0, 1], 'nodes', [['id', 'x', 'role', 'master']]]])).toThrow(/node without id, host or port/);
    expect(() => parseClusterSlots([[0, 1]])).toThrow(/bad range/);
  });
});
