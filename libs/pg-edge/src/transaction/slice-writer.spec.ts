// SliceWriter: adjacent slices of one read buffer go out as one zero-copy write.
import { Socket } from 'node:net';
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
    w.flush(socket);
    expect(socket.writes.map(String)).toEqual(['abcdefgh']);
    expect(socket.corked).toBe(0);
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
    w.flush(socket);
    expect(socket.writes.map(String)).toEqual(['one', 'two', 'three']);
    expect(socket.corked).toBe(1);
    expect(w.empty).toBe(true);
  });
});
