// Pub/sub messages and (un)subscribe confirmations, from RESP2 arrays or RESP3 pushes.
import { Buffer } from 'node:buffer';
import type { RespValue } from './value';

export type SubscriptionKind = 'subscribe' | 'unsubscribe' | 'psubscribe' | 'punsubscribe' | 'ssubscribe' | 'sunsubscribe';

export type PubSubMessage =
  | { readonly kind: 'message' | 'smessage'; readonly channel: Buffer; readonly payload: Buffer }
  | { readonly kind: 'pmessage'; readonly pattern: Buffer; readonly channel: Buffer; readonly payload: Buffer }
  /** `channel` is null for an unsubscribe with nothing left to unsubscribe. */
  | { readonly kind: SubscriptionKind; readonly channel: Buffer | null; readonly count: number }
  /** PING while subscribed (RESP2). */
  | { readonly kind: 'pong'; readonly payload: Buffer };

const SUBSCRIPTION_KINDS: ReadonlySet<string> = new Set(['subscribe', 'unsubscribe', 'psubscribe', 'punsubscribe', 'ssubscribe', 'sunsubscribe']);

function bytes(v: RespValue | undefined): Buffer | undefined {
  if (v === undefined) return undefined;
  if (v.type === 'bulk') return v.value;
  if (v.type === 'simple') return Buffer.from(v.value);
  return undefined;
}

/** The pub/sub meaning of a reply or push, or undefined when it is not one. */
export function parsePubSub(v: RespValue): PubSubMessage | undefined {
  if (v.type !== 'array' && v.type !== 'push') return undefined;
  const items = v.items;
  const kind = bytes(items[0])?.toString('latin1').toLowerCase();
  if (kind === undefined) return undefined;
  const b1 = bytes(items[1]);
  const b2 = bytes(items[2]);
  if ((kind === 'message' || kind === 'smessage') && items.length === 3 && b1 && b2) return { kind, channel: b1, payload: b2 };
  if (kind === 'pmessage' && items.length === 4) {
    const b3 = bytes(items[3]);
    if (b1 && b2 && b3) return { kind, pattern: b1, channel: b2, payload: b3 };
  }
  if (SUBSCRIPTION_KINDS.has(kind) && items.length === 3 && items[2].type === 'integer') {
    const channel = items[1].type === 'null' ? null : b1;
    if (channel !== undefined) return { kind: kind as SubscriptionKind, channel, count: Number(items[2].value) };
  }
  if (kind === 'pong' && items.length === 2 && b1) return { kind, payload: b1 };
  return undefined;
}
