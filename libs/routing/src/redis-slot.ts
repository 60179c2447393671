// Redis Cluster key slots: CRC16 (XMODEM) of the key, or of its first non-empty {hash tag}, mod 16384.
import { Buffer } from 'node:buffer';

/** Number of Redis Cluster hash slots. */
export const REDIS_SLOT_COUNT = 16384;

// CRC16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final xor.
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** CRC16/XMODEM of `bytes[start, end)`. */
export function crc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ bytes[i]) & 0xff];
  return crc;
}

const OPEN_BRACE = 0x7b; // '{'
const CLOSE_BRACE = 0x7d; // '}'

/**
 * The cluster slot of a key. When the key has a `{` followed later by a `}` with at least one
 * byte between them, only the bytes between the first `{` and the first `}` after it are hashed.
 * A string key is hashed as its UTF-8 bytes.
 */
export function redisSlot(key: Buffer | Uint8Array | string): number {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const open = bytes.indexOf(OPEN_BRACE);
  if (open >= 0) {
    const close = bytes.indexOf(CLOSE_BRACE, open + 1);
    if (close > open + 1) return crc16(bytes, open + 1, close) & (REDIS_SLOT_COUNT - 1);
  }
  return crc16(bytes) & (REDIS_SLOT_COUNT - 1);
}
