// Reading the kind of a subscribed connection's frame in place, and writing confirmations.
import { confirmation, FrameKind, frameKind } from './pubsub-frames';

const kind = (text: string): number => {
  const buf = Buffer.from(text);
  return frameKind(buf, 0, buf.length);
};

describe('pub/sub frames', () => {
  it('tells messages from confirmations in RESP2 and RESP3', () => {
    expect(kind('*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\np\r\n')).toBe(FrameKind.Message);
    expect(kind('>4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$1\r\nc\r\n$1\r\np\r\n')).toBe(FrameKind.Message);
    expect(kind('*3\r\n$8\r\nSMESSAGE\r\n$1\r\nc\r\n$1\r\np\r\n')).toBe(FrameKind.Message);
    expect(kind('*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n')).toBe(FrameKind.Confirmation);
    expect(kind('>3\r\n$12\r\npunsubscribe\r\n$1\r\nc\r\n:0\r\n')).toBe(FrameKind.Confirmation);
    expect(kind('+OK\r\n')).toBe(FrameKind.Other);
    expect(kind('*2\r\n$4\r\npong\r\n$0\r\n\r\n')).toBe(FrameKind.Other);
  });

  it('writes confirmations as Redis does, with a null channel when there was nothing to unsubscribe', () => {
    expect(confirmation(2, 'subscribe', Buffer.from('news'), 1).toString()).toBe('*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n');
    expect(confirmation(3, 'unsubscribe', null, 0).toString()).toBe('>3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n');
    expect(confirmation(2, 'unsubscribe', null, 0).toString()).toBe('*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n');
  });
});
