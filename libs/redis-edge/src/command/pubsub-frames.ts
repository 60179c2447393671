// Pub/sub frames read and written by the proxy: the kind of a frame from a subscribed connection
// (read in place) and the (un)subscribe confirmations it synthesizes from its subscription mirror.
import { Buffer } from 'node:buffer';
import { argEquals, encodeBulk, RespType } from '@dbproxy/resp';

export const FrameKind = {
  Other: 0,
  Message: 1, // message, pmessage, smessage
  Confirmation: 2, // subscribe, psubscribe, ssubscribe and their unsubscribes
} as const;

const MESSAGES = ['message', 'pmessage', 'smessage'];
const CONFIRMATIONS = ['subscribe', 'psubscribe', 'ssubscribe', 'unsubscribe', 'punsubscribe', 'sunsubscribe'];

/** What a frame from a subscribed connection is, from its first element, without decoding it. */
export function frameKind(buf: Buffer, start: number, end: number): number {
  if (buf[start] !== RespType.Array && buf[start] !== RespType.Push) return FrameKind.Other;
  let pos = buf.indexOf(0x0a, start) + 1; // after "*3\r\n"
  if (pos <= 0 || pos >= end || buf[pos] !== RespType.Bulk) return FrameKind.Other;
  const lineEnd = buf.indexOf(0x0d, pos);
  const length = Number(buf.toString('latin1', pos + 1, lineEnd));
  pos = lineEnd + 2;
  for (const name of MESSAGES) if (name.length === length && argEquals(buf, pos, length, name)) return FrameKind.Message;
  for (const name of CONFIRMATIONS) if (name.length === length && argEquals(buf, pos, length, name)) return FrameKind.Confirmation;
  return FrameKind.Other;
}

/** `subscribe <channel> <count>` as Redis sends it: an array in RESP2, a push in RESP3. */
export function confirmation(protocol: 2 | 3, kind: string, channel: Buffer | null, count: number): Buffer {
  const header = Buffer.from(`${protocol === 3 ? '>' : '*'}3\r\n$${kind.length}\r\n${kind}\r\n`);
  const name = channel ? encodeBulk(channel) : Buffer.from(protocol === 3 ? '_\r\n' : '$-1\r\n');
  return Buffer.concat([header, name, Buffer.from(`:${count}\r\n`)]);
}
