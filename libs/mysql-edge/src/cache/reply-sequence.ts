// Cached responses are stored as the packets the backend sent; a replay renumbers their sequence
// ids from the reply's first id (a client's command of several frames shifts it).
import { Buffer } from 'node:buffer';

/** A copy of `response` whose packets carry sequence ids first, first + 1, ... (mod 256). */
export function withSequence(response: Buffer, first: number): Buffer {
  const out = Buffer.from(response);
  let seq = first & 0xff;
  for (let at = 0; at + 4 <= out.length; ) {
    const length = out.readUIntLE(at, 3);
    out[at + 3] = seq;
    seq = (seq + 1) & 0xff;
    at += 4 + length;
  }
  return out;
}

/** True when `response` is whole packets (a stored value that is not is treated as a miss). */
export function isWholePackets(response: Buffer): boolean {
  let at = 0;
  while (at + 4 <= response.length) at += 4 + response.readUIntLE(at, 3);
  return at === response.length && response.length > 0;
}
