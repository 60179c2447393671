// A byte-level MySQL client for tests: logs in with the codec's client side, sends any command
// packet, and returns the response packets as the edge framed them (commands mysql2 cannot send).
import { connect, type Socket } from 'node:net';
import {
  ClientAuthExchange,
  Command,
  copyPacket,
  PacketFramer,
  PacketWriter,
  ResponseTracker,
  decodeErr,
  decodeInitialHandshake,
  encodeHandshakeResponse,
  isErrPacket,
  type ErrPacket,
  type MysqlPacket,
  type ResponseSummary,
} from '@dbproxy/protocol-mysql';

export class RawClient {
  private readonly queue: MysqlPacket[] = [];
  private waiting: ((p: MysqlPacket | null) => void) | null = null;
  private closed = false;
  readonly writer = new PacketWriter();
  capabilities = 0;

  private constructor(
    readonly socket: Socket,
    framer: PacketFramer,
  ) {
    socket.on('data', (chunk: Buffer) => {
      framer.feed(chunk, (p) => void this.queue.push(copyPacket(p)));
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static async login(port: number, user: string, password: string, database?: string): Promise<RawClient> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new RawClient(socket, new PacketFramer());
    const greeting = await client.next();
    if (!greeting || isErrPacket(greeting.payload)) throw new Error(greeting ? decodeErr(greeting.payload).message : 'closed');
    const auth = new ClientAuthExchange({ username: user, password, database: database ?? null });
    encodeHandshakeResponse(client.writer, 1, auth.respond(decodeInitialHandshake(greeting.payload)));
    socket.write(client.writer.flush());
    client.capabilities = auth.capabilities;
    for (;;) {
      const packet = await client.next();
      if (!packet) throw new Error('closed during login');
      const step = auth.next(packet.payload);
      if (step.kind === 'done') return client;
      if (step.kind === 'failed') throw new Error(`login failed: ${step.err.code} ${step.err.message}`);
      if (step.kind === 'send') {
        client.writer.begin(packet.sequenceId + 1).bytes(step.data);
        client.writer.end();
        socket.write(client.writer.flush());
      }
    }
  }

  /** The next packet, or null once the connection closed. */
  next(timeoutMs = 10_000): Promise<MysqlPacket | null> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no packet within the timeout')), timeoutMs);
      this.waiting = (p) => {
        clearTimeout(timer);
        resolve(p);
      };
    });
  }

  private wake(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    const queued = this.queue.shift();
    if (queued || this.closed) {
      this.waiting = null;
      waiting(queued ?? null);
    }
  }

  /** Sends a command whose payload is `payload` (sequence 0). */
  send(payload: Buffer): void {
    this.writer.begin(0).bytes(payload);
    this.writer.end();
    this.socket.write(this.writer.flush());
  }

  /** Sends a command and reads its whole response with a tracker. */
  async command(payload: Buffer): Promise<{ summary: ResponseSummary; packets: MysqlPacket[] }> {
    this.send(payload);
    const tracker = new ResponseTracker({ capabilities: this.capabilities, collectColumns: true });
    // a payload of 16 MiB - 1 bytes and more went out in several frames: the response follows the last
    tracker.begin(payload[0] as number, Math.floor(payload.length / 0xffffff) & 0xff);
    const packets: MysqlPacket[] = [];
    while (!tracker.complete) {
      const packet = await this.next();
      if (!packet) throw new Error('connection closed mid-response');
      packets.push(packet);
      tracker.feed(packet);
    }
    return { summary: tracker.summary, packets };
  }

  /** Sends a command and expects an ERR back. */
  async error(payload: Buffer): Promise<ErrPacket> {
    this.send(payload);
    const packet = await this.next();
    if (!packet || !isErrPacket(packet.payload)) throw new Error('expected an ERR packet');
    return decodeErr(packet.payload);
  }

  query(sql: string): Promise<{ summary: ResponseSummary; packets: MysqlPacket[] }> {
    return this.command(Buffer.concat([Buffer.of(Command.Query), Buffer.from(sql)]));
  }

  end(): void {
    this.socket.destroy();
  }
}
