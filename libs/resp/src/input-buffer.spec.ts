import { InputBuffer } from './input-buffer';

const b = (s: string): Buffer => Buffer.from(s);

describe('InputBuffer', () => {
  it('uses a chunk as is when nothing is pending', () => {
    const input = new InputBuffer();
    const chunk = b('+OK\r\n');
    input.append(chunk);
    expect(input.buffer).toBe(chunk);
    expect([input.start, input.end, input.length]).toEqual([0, 5, 5]);
  });

  it('keeps unconsumed bytes and appends, never rewriting bytes before the end', () => {
    const input = new InputBuffer(16);
    input.append(b('abcdef'));
    input.consume(4);
    const handedOut = input.buffer.subarray(0, 4);
    input.append(b('gh'));
    expect(input.buffer.toString('latin1', input.start, input.end)).toBe('efgh');
    const before = input.buffer;
    input.append(b('ij'));
    expect(input.buffer).toBe(before);
    input.consume(input.start + 2);
    input.append(b('k'.repeat(20)));
    expect(input.buffer.toString('latin1', input.start, input.end)).toBe(`ghij${'k'.repeat(20)}`);
    expect(handedOut.toString()).toBe('abcd');
  });

  it('uses a range of a shared buffer in place, and copies only the range when bytes are pending', () => {
    const input = new InputBuffer(16);
    const slab = b('xx*1\r\n$4\r\nPINGyy');
    input.appendRange(slab, 2, 12); // '*1\r\n$4\r\nPI'
    expect(input.buffer).toBe(slab);
    expect([input.start, input.end, input.length]).toEqual([2, 12, 10]);
    input.consume(10);
    input.appendRange(slab, 12, 14); // 'NG'
    expect(input.buffer).not.toBe(slab);
    expect(input.buffer.toString('latin1', input.start, input.end)).toBe('PING');
    expect(slab.toString('latin1')).toBe('xx*1\r\n$4\r\nPINGyy');
  });

  it('sizes a new buffer for the bytes a pending frame needs', () => {
    const input = new InputBuffer(16);
    input.append(b('$1000\r\n'));
    input.append(b('x'), 1007);
    expect(input.buffer.length).toBe(1007);
    input.consume(input.end);
    expect(input.length).toBe(0);
  });

  it('reserves at most maxAhead bytes beyond what has arrived', () => {
    const input = new InputBuffer(16, 100);
    const header = b('$536870912\r\n');
    input.append(header);
    input.append(b('x'), header.length + 536870912 + 2);
    expect(input.buffer.length).toBe(header.length + 1 + 100);
  });
});
