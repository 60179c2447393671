// Queued ranges merge when they continue each other; one write per flush.
import { createServer, connect, type Socket } from 'node:net';
import { descriptorOf, DirectSocket } from '@dbproxy/runtime';
import { OutputQueue } from './output-queue';

describe('output queue', () => {
  it('merges adjacent ranges of one buffer into a single view', () => {
    const q = new OutputQueue();
    const buf = Buffer.from('+OK\r\n+OK\r\n:1\r\n');
    q.append(buf, 0, 5);
    q.append(buf, 5, 10);
    q.append(buf, 10, 14);
    const out = q.take();
    expect(out.buffer).toBe(buf.buffer);
    expect(out.toString()).toBe('+OK\r\n+OK\r\n:1\r\n');
    expect(q.empty).toBe(true);
  });

  it('concatenates ranges of different buffers', () => {
    const q = new OutputQueue();
    q.appendBuffer(Buffer.from('ab'));
    q.append(Buffer.from('xcdx'), 1, 3);
    expect(q.bytes).toBe(4);
    expect(q.take().toString()).toBe('abcd');
  });

  it('writes small and large outputs to a socket in order', async () => {
    const received: Buffer[] = [];
    const server = createServer((s) => s.on('data', (c: Buffer) => received.push(c)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address() as { port: number };
    const socket: Socket = await new Promise((r) => {
      const s = connect(address.port, '127.0.0.1', () => r(s));
    });
    const q = new OutputQueue();
    const big = Buffer.alloc(100_000, 'b');
    q.appendBuffer(Buffer.from('head'));
    q.appendBuffer(big);
    q.writeTo(new DirectSocket(socket, -1));
    q.appendBuffer(Buffer.from('tail'));
    q.writeTo(new DirectSocket(socket, -1));
    const total = 4 + big.length + 4;
    for (let i = 0; i < 100 && received.reduce((n, c) => n + c.length, 0) < total; i++) await new Promise((r) => setTimeout(r, 10));
    const all = Buffer.concat(received);
    expect(all.length).toBe(total);
    expect(all.subarray(0, 4).toString()).toBe('head');
    expect(all.subarray(total - 4).toString()).toBe('tail');
    socket.destroy();
    server.close();
  });

  it('writes on the descriptor directly, and through the stream once the kernel takes only part', async () => {
    const received: Buffer[] = [];
    const peers: Socket[] = [];
    const server = createServer((s) => {
      peers.push(s);
      s.pause(); // nothing is read yet: the kernel's buffers fill and a direct write is partial
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address() as { port: number };
    const socket: Socket = await new Promise((r) => {
      const s = connect(address.port, '127.0.0.1', () => r(s));
    });
    const fd = descriptorOf(socket);
    expect(fd).toBeGreaterThanOrEqual(0);
    const q = new OutputQueue();
    const parts: Buffer[] = [];
    // Each part is one range under the copy limit; write until the kernel stops taking everything (bounded).
    for (let i = 0; i < 2000 && socket.writableLength === 0; i++) {
      const part = Buffer.alloc(64 * 1024 - 1, 97 + (i % 26));
      parts.push(part);
      q.appendBuffer(part);
      q.writeTo(new DirectSocket(socket, fd));
    }
    expect(socket.writableLength).toBeGreaterThan(0); // the rest waits in the stream
    const tail = Buffer.from('tail');
    parts.push(tail);
    q.appendBuffer(tail);
    q.writeTo(new DirectSocket(socket, fd)); // goes behind it, not on the descriptor
    for (let i = 0; i < 100 && peers.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    peers[0].on('data', (c: Buffer) => received.push(c));
    peers[0].resume();
    const total = parts.reduce((n, p) => n + p.length, 0);
    for (let i = 0; i < 500 && received.reduce((n, c) => n + c.length, 0) < total; i++) await new Promise((r) => setTimeout(r, 10));
    expect(Buffer.concat(received).equals(Buffer.concat(parts))).toBe(true);
    socket.destroy();
    for (const peer of peers) peer.destroy();
    await new Promise((r) => server.close(r));
  });

  it('leaves a closed socket to the stream (the descriptor is not used once the handle is gone)', async () => {
    const peers: Socket[] = [];
    const server = createServer((s) => peers.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address() as { port: number };
    const socket: Socket = await new Promise((r) => {
      const s = connect(address.port, '127.0.0.1', () => r(s));
    });
    const fd = descriptorOf(socket);
    socket.on('error', () => undefined);
    socket.destroy();
    const q = new OutputQueue();
    q.appendBuffer(Buffer.from('+OK\r\n'));
    expect(q.writeTo(new DirectSocket(socket, fd))).toBe(false);
    expect(q.empty).toBe(true);
    for (let i = 0; i < 100 && peers.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    for (const peer of peers) peer.destroy();
    await new Promise((r) => server.close(r));
  });
});
