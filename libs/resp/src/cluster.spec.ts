import { parseClusterShards, parseClusterSlots } from './cluster';
import { decodeReply } from './reply-decoder';

// Captured from a two-node Redis 7.0 cluster (node A announces hostname host-a.example).
const A = '50ac547c8dfdb61a77a978c87156ec1fcda3b688';
const B = '9130b54be6ec185591f5e92af5203b923e23cdf1';
const SLOTS_RESP2 =
  `*2\r\n*3\r\n:0\r\n:8191\r\n*4\r\n$9\r\n127.0.0.1\r\n:17001\r\n$40\r\n${A}\r\n*2\r\n$8\r\nhostname\r\n$14\r\nhost-a.example\r\n` +
  `*3\r\n:8192\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:17002\r\n$40\r\n${B}\r\n*0\r\n`;
const SLOTS_RESP3 = SLOTS_RESP2.replace('*2\r\n$8\r\nhostname', '%1\r\n$8\r\nhostname').replace(`${B}\r\n*0\r\n`, `${B}\r\n%0\r\n`);
const node = (fields: string[]): string => fields.join('');
const SHARD_B = node(['$2\r\nid\r\n', `$40\r\n${B}\r\n`, '$4\r\nport\r\n:17002\r\n', '$2\r\nip\r\n$9\r\n127.0.0.1\r\n', '$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n', '$4\r\nrole\r\n$6\r\nmaster\r\n', '$18\r\nreplication-offset\r\n:0\r\n', '$6\r\nhealth\r\n$6\r\nonline\r\n']);
const SHARDS_RESP2 = `*1\r\n*4\r\n$5\r\nslots\r\n*4\r\n:8192\r\n:16383\r\n:100\r\n:200\r\n$5\r\nnodes\r\n*1\r\n*14\r\n${SHARD_B}`;
const SHARDS_RESP3 = `*1\r\n%2\r\n$5\r\nslots\r\n*4\r\n:8192\r\n:16383\r\n:100\r\n:200\r\n$5\r\nnodes\r\n*1\r\n%7\r\n${SHARD_B}`;

const decode = (s: string) => decodeReply(Buffer.from(s, 'latin1'));

describe('parseClusterSlots', () => {
  it.each([['RESP2', SLOTS_RESP2], ['RESP3', SLOTS_RESP3]])('reads ranges, masters, ids and hostname metadata (%s)', (_proto, text) => {
    expect(parseClusterSlots(decode(text))).toEqual([
      { start: 0, end: 8191, master: { host: '127.0.0.1', port: 17001, id: A, metadata: { hostname: 'host-a.example' } }, replicas: [] },
      { start: 8192, end: 16383, master: { host: '127.0.0.1', port: 17002, id: B, metadata: {} }, replicas: [] },
    ]);
  });

  it('reads replicas and pre-7 entries without metadata', () => {
    const text = '*1\r\n*4\r\n:0\r\n:16383\r\n*2\r\n$1\r\nm\r\n:1\r\n*3\r\n$1\r\nr\r\n:2\r\n$2\r\nid\r\n';
    expect(parseClusterSlots(decode(text))[0].replicas).toEqual([{ host: 'r', port: 2, id: 'id', metadata: {} }]);
  });

  it('rejects a reply of the wrong shape', () => {
    expect(() => parseClusterSlots(decode('*1\r\n*2\r\n:0\r\n:1\r\n'))).toThrow(expect.objectContaining({ code: 'DBP_ERR_RESP_UNEXPECTED_REPLY_SHAPE' }));
    expect(() => parseClusterSlots(decode('-ERR This instance has cluster support disabled\r\n'))).toThrow(/unexpected CLUSTER SLOTS reply/);
  });
});

describe('parseClusterShards', () => {
  it.each([['RESP2', SHARDS_RESP2], ['RESP3', SHARDS_RESP3]])('reads slot ranges and nodes (%s)', (_proto, text) => {
    expect(parseClusterShards(decode(text))).toEqual([
      {
        slots: [[8192, 16383], [100, 200]],
        nodes: [{ id: B, ip: '127.0.0.1', endpoint: '127.0.0.1', port: 17002, role: 'master', replicationOffset: 0, health: 'online' }],
      },
    ]);
  });
});
