// Test support for protocol-mysql (secondary entry point `@dbproxy/protocol-mysql/testing`):
// feeding wire bytes every way a socket could cut them, and asserting typed protocol errors.
import { Buffer } from 'node:buffer';
import { DbproxyError } from '@dbproxy/util';
import { copyPacket, PacketFramer, type MysqlPacket } from '../framing';

/** Every way the brief asks a decoder to be fed: whole, split at every byte, byte by byte. */
export function* chunkings(bytes: Buffer): Generator<{ name: string; chunks: Buffer[] }> {
  yield { name: 'whole', chunks: [bytes] };
  for (let i = 1; i < bytes.length; i++) yield { name: `split at ${i}`, chunks: [bytes.subarray(0, i), bytes.subarray(i)] };
  const single: Buffer[] = [];
  for (let i = 0; i < bytes.length; i++) single.push(bytes.subarray(i, i + 1));
  yield { name: 'byte by byte', chunks: single };
}

/** Frames `chunks` with a fresh framer and returns every packet, payloads copied. */
export function framePackets(chunks: readonly Buffer[], maxPacketSize?: number): MysqlPacket[] {
  const framer = new PacketFramer({ maxPacketSize });
  const out: MysqlPacket[] = [];
  for (const chunk of chunks) {
    framer.feed(chunk, (p) => {
      out.push(copyPacket(p));
    });
  }
  if (framer.bufferedBytes !== 0) throw new Error(`framer holds ${framer.bufferedBytes} bytes after the last chunk`);
  return out;
}

/**
 * Decodes the packets in `wire` after feeding it every way; checks that each way gives the same
 * result and returns it. `decode` receives each packet and its index.
 */
export function decodeEveryWay<T>(wire: Buffer, decode: (packet: MysqlPacket, index: number) => T): T[] {
  let first: T[] | null = null;
  for (const { name, chunks } of chunkings(wire)) {
    const decoded = framePackets(chunks).map(decode);
    if (first === null) first = decoded;
    else expectSame(first, decoded, name);
  }
  return first ?? [];
}

function expectSame<T>(a: T[], b: T[], how: string): void {
  const same = JSON.stringify(a, replacer) === JSON.stringify(b, replacer);
  if (!same) throw new Error(`decoding fed ${how} differs from decoding fed whole`);
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof Map) return [...value.entries()];
  return value;
}

/** Runs `fn`; passes when it returns or throws a DbproxyError with a DBP_ERR_MYSQL_* code; rethrows anything else. */
export function returnsOrThrowsProtocolError(fn: () => unknown): 'ok' | string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (err instanceof DbproxyError && err.code.startsWith('DBP_ERR_MYSQL_')) return err.code;
    throw err;
  }
}

/** The DBP_ERR_* code `fn` throws, or throws itself when `fn` does not throw a DbproxyError. */
export function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof DbproxyError) return err.code;
    throw err;
  }
  throw new Error('expected a DbproxyError, nothing was thrown');
}
