import { parsePubSub } from './pubsub';
import { decodeReply } from './reply-decoder';

const decode = (s: string) => decodeReply(Buffer.from(s, 'latin1'));
const buf = (s: string): Buffer => Buffer.from(s);

describe('parsePubSub', () => {
  it('reads messages from RESP2 arrays and RESP3 pushes', () => {
    expect(parsePubSub(decode('*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n'))).toEqual({ kind: 'message', channel: buf('ch'), payload: buf('hi') });
    expect(parsePubSub(decode('>3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$0\r\n\r\n'))).toEqual({ kind: 'smessage', channel: buf('ch'), payload: buf('') });
    expect(parsePubSub(decode('>4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$1\r\nx\r\n'))).toEqual({
      kind: 'pmessage', pattern: buf('c*'), channel: buf('ch'), payload: buf('x'),
    });
  });

  it('reads subscription confirmations, including an unsubscribe from nothing', () => {
    expect(parsePubSub(decode('*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n'))).toEqual({ kind: 'subscribe', channel: buf('a'), count: 1 });
    expect(parsePubSub(decode('*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n'))).toEqual({ kind: 'unsubscribe', channel: null, count: 0 });
    expect(parsePubSub(decode('>3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:1\r\n'))).toEqual({ kind: 'psubscribe', channel: buf('p*'), count: 1 });
  });

  it('reads a subscribed PING reply', () => {
    expect(parsePubSub(decode('*2\r\n$4\r\npong\r\n$0\r\n\r\n'))).toEqual({ kind: 'pong', payload: buf('') });
  });

  it('returns undefined for replies that are not pub/sub', () => {
    for (const text of ['+OK\r\n', '*0\r\n', '*2\r\n$7\r\nmessage\r\n$1\r\na\r\n', '*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n$1\r\n1\r\n', '*1\r\n:1\r\n']) {
      expect(parsePubSub(decode(text))).toBeUndefined();
    }
  });
});
