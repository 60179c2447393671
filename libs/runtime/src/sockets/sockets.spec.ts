// Reading and writing sockets without the stream layer, over real loopback TCP: adopted accepted
// sockets, onread backends (own Buffers and slab ranges), direct writes.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { descriptorOf, DirectSocket } from './direct-write';
import { adoptable, adoptSocket, adoptSocketRaw, ByteReader, onreadRanges, readSocket } from './scratch-reads';

async function listening(onConnection: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(onConnection);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port };
}

function collect(): { chunks: Buffer[]; text: () => string; until: (text: string) => Promise<void> } {
  const chunks: Buffer[] = [];
  const text = () => Buffer.concat(chunks).toString();
  const until = async (wanted: string) => {
    for (let i = 0; i < 200 && text() !== wanted; i++) await new Promise((r) => setTimeout(r, 10));
    expect(text()).toBe(wanted);
  };
  return { chunks, text, until };
}

async function acceptedWithEarlyBytes(): Promise<{ server: Server; client: Socket; original: Socket }> {
  let accepted: Socket | undefined;
  const { server, port } = await listening((socket) => {
    socket.pause();
    accepted = socket;
  });
  const client = connect({ port, host: '127.0.0.1' });
  await once(client, 'connect');
  client.write('early ');
  for (let i = 0; i < 200 && !(accepted && accepted.readableLength > 0); i++) await new Promise((r) => setTimeout(r, 10));
  return { server, client, original: accepted as Socket };
}

describe('adoptSocket', () => {
  it('delivers bytes buffered before adoption first, then later reads; writes and closes go through the adopted socket', async () => {
    const { server, client, original } = await acceptedWithEarlyBytes();
    expect(adoptable(original)).toBe(true);
    const received = collect();
    const adopted = adoptSocket(original, (chunk) => received.chunks.push(chunk));
    if (adopted === null) throw new Error('not adopted');
    expect(adopted).not.toBe(original);
    client.write('late');
    await received.until('early late');

    const echoed = collect();
    client.on('data', (chunk: Buffer) => echoed.chunks.push(chunk));
    expect(new DirectSocket(adopted, descriptorOf(adopted)).write(Buffer.from('xxanswerxx'), 2, 8)).toBe(true);
    await echoed.until('answer');

    const originalClosed = once(original, 'close');
    client.end();
    await once(adopted, 'close');
    await originalClosed;
    expect(original.destroyed).toBe(true);
    server.close();
  });

  it('leaves a socket without a handle alone; readSocket keeps it on the stream path', async () => {
    const { server, port } = await listening((socket) => socket.destroy());
    const client = connect({ port, host: '127.0.0.1' });
    await once(client, 'close');
    expect(adoptable(client)).toBe(false);
    expect(adoptSocket(client, () => undefined)).toBeNull();
    expect(readSocket(client, () => undefined)).toBe(client);
    expect(descriptorOf(client)).toBe(-1);
    server.close();
  });
});

describe('onread backends', () => {
  it('ByteReader hands each read over as its own Buffer, holding reads that came before a sink', async () => {
    const { server, port } = await listening((socket) => {
      socket.write('first');
      setTimeout(() => socket.end('second'), 50);
    });
    const reader = new ByteReader();
    const backend = connect({ port, host: '127.0.0.1', onread: reader.onread });
    await new Promise((r) => setTimeout(r, 30)); // 'first' arrives with no sink yet
    const received = collect();
    reader.sink = (chunk) => received.chunks.push(chunk);
    expect(received.text()).toBe('first');
    await received.until('firstsecond');
    // Later reads reuse the scratch buffer: what was handed over must not change.
    expect(received.chunks[0]?.toString()).toBe('first');
    backend.destroy();
    server.close();
  });

  it('ByteReader drops reads after release()', async () => {
    const { server, port } = await listening((socket) => {
      socket.write('kept');
      setTimeout(() => socket.end('dropped'), 50);
    });
    const reader = new ByteReader();
    const received = collect();
    reader.sink = (chunk) => received.chunks.push(chunk);
    const backend = connect({ port, host: '127.0.0.1', onread: reader.onread });
    await received.until('kept');
    reader.release();
    await once(backend, 'end');
    expect(received.text()).toBe('kept');
    backend.destroy();
    server.close();
  });

  it('onreadRanges hands reads over as ranges that are never rewritten', async () => {
    const { server, port } = await listening((socket) => {
      socket.write('one');
      setTimeout(() => socket.end('two'), 50);
    });
    const ranges: [Buffer, number, number][] = [];
    const backend = connect({ port, host: '127.0.0.1', onread: onreadRanges((buf, start, end) => ranges.push([buf, start, end])) });
    await once(backend, 'end');
    expect(ranges.map(([buf, start, end]) => buf.toString('latin1', start, end)).join('')).toBe('onetwo');
    backend.destroy();
    server.close();
  });
});

describe('uncopied reads', () => {
  it('ByteReader.rawSink gets held reads first, then each read as scratch bytes valid during the call', async () => {
    const { server, port } = await listening((socket) => {
      socket.write('held');
      setTimeout(() => socket.write('one'), 50);
      setTimeout(() => socket.end('two'), 100);
    });
    const reader = new ByteReader();
    const backend = connect({ port, host: '127.0.0.1', onread: reader.onread });
    await new Promise((r) => setTimeout(r, 30));
    const received = collect();
    const views: Buffer[] = [];
    reader.rawSink = (buf, n) => {
      views.push(buf);
      received.chunks.push(Buffer.from(buf.subarray(0, n))); // copied within the call, as a relay's remainder is
    };
    await received.until('heldonetwo');
    expect(views.length).toBeGreaterThanOrEqual(2);
    expect(views[1]).toBe(views[views.length - 1]); // every read after the held one lands in the same scratch
    backend.destroy();
    server.close();
  });

  it('adoptSocketRaw delivers bytes buffered before adoption, then later reads', async () => {
    const { server, client, original } = await acceptedWithEarlyBytes();
    const received = collect();
    const adopted = adoptSocketRaw(original, (buf, n) => received.chunks.push(Buffer.from(buf.subarray(0, n))));
    expect(adopted).not.toBeNull();
    client.write('late');
    await received.until('early late');
    adopted?.destroy();
    client.destroy();
    server.close();
  });

  it('DirectSocket.writeCopying writes what the kernel takes and copies only the rest into the stream, in order', async () => {
    let peer: Socket | undefined;
    const { server, port } = await listening((socket) => {
      socket.pause(); // reads nothing until the end: the socket buffers fill
      peer = socket;
    });
    const writer = connect({ port, host: '127.0.0.1' });
    await once(writer, 'connect');
    for (let i = 0; i < 200 && peer === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    const direct = new DirectSocket(writer, descriptorOf(writer));
    const scratch = Buffer.alloc(256 * 1024);
    const expected: Buffer[] = [];
    let buffered = false;
    for (let round = 0; round < 64 && !buffered; round++) {
      scratch.fill(round % 251);
      expected.push(Buffer.from(scratch));
      buffered = !direct.writeCopying(scratch, scratch.length);
    }
    expect(buffered).toBe(true); // the kernel stopped taking bytes: the rest went to the stream, copied
    scratch.fill(255); // the caller reuses its buffer at once
    writer.end();
    const got: Buffer[] = [];
    const reader = peer as Socket;
    reader.on('data', (c: Buffer) => got.push(c));
    reader.resume();
    await once(reader, 'end');
    expect(Buffer.concat(got).equals(Buffer.concat(expected))).toBe(true);
    server.close();
  });

  it('DirectSocket writes past the stream only while nothing waits in it: corked, the stream takes the bytes, in order', async () => {
    const received = collect();
    const { server, port } = await listening((socket) => socket.on('data', (c: Buffer) => received.chunks.push(c)));
    const writer = connect({ port, host: '127.0.0.1' });
    await once(writer, 'connect');
    const direct = new DirectSocket(writer, descriptorOf(writer));
    const streamWrite = jest.spyOn(writer, 'write');
    expect(direct.write(Buffer.from('xxonexx'), 2, 5)).toBe(true);
    expect(streamWrite).not.toHaveBeenCalled();
    writer.cork();
    expect(direct.corked).toBe(true);
    direct.write(Buffer.from(' two'));
    writer.uncork();
    direct.write(Buffer.from(' three')); // 'two' may still wait in the stream: behind it, not past it
    await received.until('one two three');
    expect(streamWrite).toHaveBeenCalled();
    writer.destroy();
    expect(direct.destroyed).toBe(true);
    server.close();
  });
});
