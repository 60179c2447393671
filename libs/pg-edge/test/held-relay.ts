// A TCP relay between pg-edge and PostgreSQL whose server-to-edge bytes can be held back: a test
// makes the edge see a backend's FATAL only after it has lent the connection and written to it.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from '@dbproxy/testing';

interface Pair {
  readonly edge: Socket;
  readonly server: Socket;
  held: Buffer[] | undefined;
  serverEnded: boolean;
}

export class HeldRelay {
  private constructor(
    private readonly listener: Server,
    readonly port: number,
    private readonly pairs: Pair[],
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<HeldRelay> {
    const port = await freePort();
    const pairs: Pair[] = [];
    const listener = createServer((edge) => {
      const server = connect(targetPort, targetHost);
      const pair: Pair = { edge, server, held: undefined, serverEnded: false };
      pairs.push(pair);
      edge.on('data', (chunk) => server.writable && server.write(chunk));
      server.on('data', (chunk) => (pair.held ? pair.held.push(chunk) : edge.write(chunk)));
      server.on('close', () => {
        pair.serverEnded = true;
        if (!pair.held) edge.end();
      });
      edge.on('close', () => server.destroy());
      edge.on('error', () => undefined);
      server.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
    return new HeldRelay(listener, port, pairs);
  }

  /** What the server sends on the connection whose server-side client port is `clientPort` (pg_stat_activity.client_port) waits for release(). */
  hold(clientPort: number): void {
    const pair = this.pairs.find((p) => p.server.localPort === clientPort);
    if (!pair) throw new Error(`no relayed connection from port ${clientPort}`);
    pair.held ??= [];
  }

  /** Bytes held so far from the connections held (a FATAL the server sent before closing). */
  heldBytes(): number {
    return this.pairs.reduce((sum, pair) => sum + (pair.held?.reduce((n, b) => n + b.length, 0) ?? 0), 0);
  }

  /** The held bytes reach the edge, then the close of a server that ended meanwhile. */
  release(): void {
    for (const pair of this.pairs) {
      if (!pair.held) continue;
      for (const chunk of pair.held) pair.edge.write(chunk);
      pair.held = undefined;
      if (pair.serverEnded) pair.edge.end();
    }
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.edge.destroy();
      pair.server.destroy();
    }
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }
}
