// The worker side: receive admitted sockets from the primary, report their close, answer the
// primary's gather requests, and drain when told to.
import type { Socket } from 'node:net';
import { isWorkerMessage, type GatherReply } from './messages';

export type Provider = (arg?: unknown) => unknown;

export class WorkerEndpoint {
  private readonly handlers = new Map<string, (socket: Socket, listener: string) => void>();
  private readonly providers = new Map<string, Provider>();
  private readonly open = new Set<Socket>();
  private active = 0;

  constructor(private readonly onDrain: (deadline: number) => void) {
    process.on('message', (message: unknown, handle: unknown) => this.receive(message, handle));
  }

  handle(listener: string, onConnection: (socket: Socket, listener: string) => void): void {
    this.handlers.set(listener, onConnection);
  }

  provide(topic: string, provider: Provider): void {
    this.providers.set(topic, provider);
  }

  activeConnections(): number {
    return this.active;
  }

  /** Destroys the connections still open in this worker; returns how many. */
  destroyConnections(): number {
    const sockets = [...this.open];
    for (const socket of sockets) socket.destroy();
    return sockets.length;
  }

  /** Tells the primary this worker has started its service. */
  ready(): void {
    process.send?.({ type: 'dbproxy:worker-ready' });
  }

  private receive(message: unknown, handle: unknown): void {
    if (!isWorkerMessage(message)) return;
    switch (message.type) {
      case 'dbproxy:connection':
        return this.serve(handle as Socket | undefined, message.listener);
      case 'dbproxy:gather':
        void this.answer(message.id, message.topic, message.arg);
        return;
      case 'dbproxy:drain':
        return this.onDrain(message.deadline);
      default:
        return;
    }
  }

  private serve(socket: Socket | undefined, listener: string): void {
    const handler = this.handlers.get(listener);
    if (!socket) return;
    if (!handler) {
      socket.destroy();
      process.send?.({ type: 'dbproxy:closed', listener });
      return;
    }
    this.active++;
    this.open.add(socket);
    socket.setNoDelay(true);
    socket.once('close', () => {
      this.active--;
      this.open.delete(socket);
      process.send?.({ type: 'dbproxy:closed', listener });
    });
    handler(socket, listener);
  }

  private async answer(id: number, topic: string, arg: unknown): Promise<void> {
    const provider = this.providers.get(topic);
    let reply: GatherReply;
    try {
      reply = provider ? { type: 'dbproxy:gathered', id, value: await provider(arg) } : { type: 'dbproxy:gathered', id, error: `no provider for ${topic}` };
    } catch (err) {
      reply = { type: 'dbproxy:gathered', id, error: err instanceof Error ? err.message : String(err) };
    }
    process.send?.(reply);
  }
}
