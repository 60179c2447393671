// Test helpers for resp: feed bytes to the scanners whole, split at every byte and byte by byte.
import { Buffer } from 'node:buffer';
import { CommandScanner } from '../command-scanner';
import { InputBuffer } from '../input-buffer';
import type { RespLimits } from '../limits';
import { ReplyScanner } from '../reply-scanner';

export interface ScannedCommand {
  frame: Buffer;
  args: Buffer[];
  inline: boolean;
}

export interface ScannedReply {
  frame: Buffer;
  type: number;
  flags: number;
}

/** Ways to cut `bytes` into chunks: whole, at every single position, and one byte per chunk. */
export function chunkings(bytes: Buffer): Buffer[][] {
  const out: Buffer[][] = [[bytes]];
  for (let at = 1; at < bytes.length; at++) out.push([bytes.subarray(0, at), bytes.subarray(at)]);
  if (bytes.length > 2) out.push(Array.from(bytes, (b) => Buffer.from([b])));
  return out;
}

/**
 * Feeds chunks to a fresh CommandScanner. `moving` copies the unconsumed tail into a new
 * buffer for every chunk (the pending frame changes position); otherwise an InputBuffer
 * grows in place. Returns copies of everything found and the count of unconsumed bytes.
 */
export function scanCommands(chunks: Buffer[], limits: Partial<RespLimits> = {}, moving = false): { commands: ScannedCommand[]; rest: number } {
  const scanner = new CommandScanner(limits);
  const input = new InputBuffer(moving ? 1 : 64);
  const commands: ScannedCommand[] = [];
  let tail = Buffer.alloc(0);
  for (const chunk of chunks) {
    let buf: Buffer;
    let start: number;
    if (moving) {
      tail = Buffer.concat([tail, chunk]);
      buf = tail;
      start = 0;
    } else {
      input.append(chunk, scanner.needBytes);
      buf = input.buffer;
      start = input.start;
    }
    const end = moving ? buf.length : input.end;
    const batch = scanner.scan(buf, start, end);
    for (let i = 0; i < batch.count; i++) {
      commands.push({ frame: Buffer.from(batch.frame(i)), args: batch.args(i).map((a) => Buffer.from(a)), inline: batch.isInline(i) });
    }
    if (moving) tail = Buffer.from(buf.subarray(batch.consumed));
    else input.consume(batch.consumed);
  }
  return { commands, rest: moving ? tail.length : input.length };
}

/** Feeds chunks to a fresh ReplyScanner through an InputBuffer; returns copies of the replies found. */
export function scanReplies(chunks: Buffer[], limits: Partial<RespLimits> = {}, moving = false): { replies: ScannedReply[]; rest: number } {
  const scanner = new ReplyScanner(limits);
  const input = new InputBuffer(moving ? 1 : 64);
  const replies: ScannedReply[] = [];
  let tail = Buffer.alloc(0);
  for (const chunk of chunks) {
    if (moving) tail = Buffer.concat([tail, chunk]);
    else input.append(chunk, scanner.needBytes);
    const buf = moving ? tail : input.buffer;
    const batch = scanner.scan(buf, moving ? 0 : input.start, moving ? buf.length : input.end);
    for (let i = 0; i < batch.count; i++) {
      replies.push({ frame: Buffer.from(batch.frame(i)), type: batch.type[i], flags: batch.flags[i] });
    }
    if (moving) tail = Buffer.from(buf.subarray(batch.consumed));
    else input.consume(batch.consumed);
  }
  return { replies, rest: moving ? tail.length : input.length };
}
