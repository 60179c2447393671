// The client's packets of a relayed login, awaited one at a time by the passthrough relay.
import type { MysqlPacket } from '@dbproxy/protocol-mysql';

export class ClientPacketQueue {
  private readonly queue: MysqlPacket[] = [];
  private waiting: { resolve: (p: MysqlPacket) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;

  push(packet: MysqlPacket): void {
    const waiting = this.waiting;
    if (waiting === null) return void this.queue.push(packet);
    this.waiting = null;
    waiting.resolve(packet);
  }

  next(): Promise<MysqlPacket> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  fail(err: Error): void {
    this.failure ??= err;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(err);
  }
}
