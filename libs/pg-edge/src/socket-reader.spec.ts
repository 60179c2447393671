// Reading sockets without the stream layer: adopted accepted sockets and onread backends over real loopback TCP.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { adoptable, adoptSocket, ScratchReader } from './socket-reader';

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

describe('adoptSocket', () => {
  it('delivers bytes buffered before adoption first, then later reads; writes and closes go through the adopted socket', async () => {
    let accepted: Socket | undefined;
    const { server, port } = await listening((socket) => {
      socket.pause();
      accepted = socket;
    });
    const client = connect({ port, host: '127.0.0.1' });
    await once(client, 'connect');
    client.write('early ');
    for (let i = 0; i < 200 && !(accepted && accepted.readableLength > 0); i++) await new Promise((r) => setTimeout(r, 10));
    const original = accepted as Socket;
    expect(adoptable(original)).toBe(true);
    const received = collect();
    const adopted = adoptSocket(original, (chunk) => received.chunks.push(chunk));
    expect(adopted).not.toBe(original);
    client.write('late');
    await received.until('early late');

    const echoed = collect();
    client.on('data', (chunk: Buffer) => echoed.chunks.push(chunk));
    adopted.write('answer');
    await echoed.until('answer');

    const originalClosed = once(original, 'close');
    client.end();
    await once(adopted, 'close');
    await originalClosed;
    expect(original.destroyed).toBe(true);
    server.close();
  });

  it('leaves a socket without a handle on the stream path', async () => {
    const { server, port } = await listening((socket) => socket.destroy());
    const client = connect({ port, host: '127.0.0.1' });
    await once(client, 'close');
    expect(adoptable(client)).toBe(false);
    expect(adoptSocket(client, () => undefined)).toBe(client);
    server.close();
  });
});

describe('ScratchReader', () => {
  it('hands each read over as its own Buffer, holding reads that came before a sink', async () => {
    const { server, port } = await listening((socket) => {
      socket.write('first');
      setTimeout(() => socket.end('second'), 50);
    });
    const reader = new ScratchReader();
    const backend = connect({ port, host: '127.0.0.1', onread: reader.onread });
    await new Promise((r) => setTimeout(r, 30)); // 'first' arrives with no sink yet
    const received = collect();
    reader.sink = (chunk) => received.chunks.push(chunk);
    expect(received.text()).toBe('first');
    await received.until('firstsecond');
    // Later reads reuse the scratch buffer: what was handed over must not change.
    expect(received.chunks[0].toString()).toBe('first');
    backend.destroy();
    server.close();
  });
});
