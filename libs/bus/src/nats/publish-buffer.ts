// Publishes made while NATS is away, kept (bounded, in order) until the connection returns.
// nats.js v2 discards its own outbound buffer on every reconnect attempt, so we keep ours.
import type { MsgHdrs } from 'nats';

export interface PendingPublish {
  readonly subject: string;
  readonly payload: Uint8Array;
  readonly headers: MsgHdrs | undefined;
}

export class PublishBuffer {
  private items: PendingPublish[] = [];
  private bytes = 0;

  constructor(private readonly limitBytes: number) {}

  /** False when the message does not fit: the caller drops and reports it. */
  add(item: PendingPublish): boolean {
    const size = item.payload.byteLength + item.subject.length;
    if (this.bytes + size > this.limitBytes) return false;
    this.items.push(item);
    this.bytes += size;
    return true;
  }

  /** Everything buffered, oldest first; the buffer is empty afterwards. */
  take(): PendingPublish[] {
    const items = this.items;
    this.items = [];
    this.bytes = 0;
    return items;
  }
}
