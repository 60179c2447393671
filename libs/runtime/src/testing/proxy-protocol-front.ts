// A load balancer for tests: accepts clients, connects to the edge from `bindAddress`, opens with a
// PROXY protocol v2 header naming the client (or `claimSource`, like a balancer whose clients are
// elsewhere), then relays both ways. `header: 'none'` leaves the header out; a Buffer sends those bytes.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { encodeProxyV2, unmapIPv4 } from '../proxy-protocol/encode';

export interface ProxyFrontOptions {
  readonly target: { readonly host: string; readonly port: number };
  /** The address the front connects to the edge from (a 127.x.y.z on Linux loopback). */
  readonly bindAddress: string;
  /** The source address the header names instead of the client's own. */
  readonly claimSource?: string;
  readonly header?: 'v2' | 'none' | Buffer;
}

export interface ProxyFront {
  readonly port: number;
  close(): Promise<void>;
}

function relay(client: Socket, options: ProxyFrontOptions): void {
  const upstream = connect({ host: options.target.host, port: options.target.port, localAddress: options.bindAddress });
  client.pause();
  upstream.once('connect', () => {
    const header = options.header ?? 'v2';
    if (header === 'v2') {
      const source = { address: options.claimSource ?? unmapIPv4(client.remoteAddress ?? ''), port: client.remotePort ?? 0 };
      upstream.write(encodeProxyV2({ source, destination: { address: options.target.host, port: options.target.port } }));
    } else if (header !== 'none') upstream.write(header);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', end).on('close', end);
  upstream.on('error', end).on('close', end);
}

export async function startProxyFront(options: ProxyFrontOptions): Promise<ProxyFront> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    relay(client, options);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
