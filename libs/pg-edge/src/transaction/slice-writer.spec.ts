// SliceWriter: adjacent slices of one read buffer go out as one zero-copy write.
import { Socket, connect, createServer, type AddressInfo } from 'node:net';
import { descriptorOf, DirectSocket } from '@dbproxy/runtime';
import { SliceWriter } from './slice-writer';

class RecordingSocket extends Socket {
  readonly writes: Buffer[] = [];
  corked = 0;
  override write(chunk: Uint8Array | string): boolean {
    this.writes.push(Buffer.from(chunk as Uint8Array));
    return true;
  }
  override cork(): void {
    this.corked++;
  }
  override uncork(): void {}
}

describe('SliceWriter', () => {
  it('merges adjacent slices of the same buffer into one write', () => {
    const chunk = Buffer.from('abcdefgh');
    const w = new SliceWriter();
    w.add(chunk.subarray(0, 3));
    w.add(chunk.subarray(3, 5));
    w.add(chunk.subarray(5));
    const socket = new RecordingSocket();
    expect(w.length).toBe(8);
    w.flush(new DirectSocket(socket, -1));
    expect(socket.writes.map(String)).toEqual(['abcdefgh']);
    expect(socket.corked).toBe(0);
  });

  it('merges adjacent ranges and slices of one buffer, and keeps a range apart from another buffer', () => {
    const chunk = Buffer.from('abcdefgh');
    const w = new SliceWriter();
    w.addRange(chunk, 0, 2);
    w.add(chunk.subarray(2, 4));
    w.addRange(chunk.subarray(4), 0, 2);
    const rows = new SliceWriter();
    rows.addRange(chunk, 6, 8);
    w.append(rows);
    expect(rows.empty).toBe(true);
    const socket = new RecordingSocket();
    w.flush(new DirectSocket(socket, -1));
    expect(socket.writes.map(String)).toEqual(['abcdefgh']);
    w.addRange(chunk, 1, 3);
    w.addRange(Buffer.from('xy'), 0, 2);
    w.flush(new DirectSocket(socket, -1));
    expect(socket.writes.slice(1).map(String)).toEqual(['bc', 'xy']);
  });

  it('corks several pieces into one writev and keeps their order', () => {
    const w = new SliceWriter();
    w.add(Buffer.from('one'));
    w.add(Buffer.from('two'));
    const held = new SliceWriter();
    held.add(Buffer.from('three'));
    w.append(held);
    expect(held.empty).toBe(true);
    const socket = new RecordingSocket();
    w.flush(new DirectSocket(socket, -1));
    expect(socket.writes.map(String)).toEqual(['one', 'two', 'three']);
    expect(socket.corked).toBe(1);
    expect(w.empty).toBe(true);
  });
});

describe('SliceWriter on a TCP descriptor', () => {
  it('gathers several pieces (short ones, one apart, one long) into one direct write past the stream, in order', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const received: Buffer[] = [];
    const got = new Promise<void>((resolve) =>
      server.once('connection', (peer) => peer.on('data', (chunk: Buffer) => (received.push(chunk), Buffer.concat(received).length === 311 && resolve()))),
    );
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    try {
      const streamWrite = jest.spyOn(socket, 'write');
      const w = new SliceWriter();
      w.add(Buffer.from('one'));
      w.addApart(Buffer.from('two'));
      w.add(Buffer.alloc(300, 'x'));
      w.add(Buffer.from('three'));
      expect(w.length).toBe(311);
      expect(w.flush(new DirectSocket(socket, descriptorOf(socket)))).toBe(true);
      await got;
      expect(Buffer.concat(received).toString()).toBe(`onetwo${'x'.repeat(300)}three`);
      expect(streamWrite).not.toHaveBeenCalled();
      expect(w.empty).toBe(true);
    } finally {
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
