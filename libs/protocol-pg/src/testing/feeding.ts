// Test support: the ways a byte stream can arrive (whole, split at every byte, byte by byte).
import { Buffer } from 'node:buffer';

export interface Chunking {
  readonly label: string;
  readonly chunks: Buffer[];
}

/** Whole; byte by byte; and split in two at every position. */
export function chunkings(bytes: Buffer): Chunking[] {
  const out: Chunking[] = [{ label: 'whole', chunks: [bytes] }];
  out.push({ label: 'byte by byte', chunks: Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)) });
  for (let i = 1; i < bytes.length; i++) {
    out.push({ label: `split at ${i}`, chunks: [bytes.subarray(0, i), bytes.subarray(i)] });
  }
  return out;
}

/** Feeds chunks to a push-style decoder and collects everything it emits. */
export function collect<T>(chunks: readonly Buffer[], push: (chunk: Buffer, emit: (item: T) => void) => void): T[] {
  const items: T[] = [];
  for (const chunk of chunks) push(chunk, (item) => items.push(item));
  return items;
}

/** Copies into fresh buffers so a test can tell slices of the input from copies. */
export function fresh(bytes: Buffer): Buffer {
  return Buffer.from(bytes);
}
