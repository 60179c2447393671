import { DbproxyError } from '@dbproxy/util';
import fc from 'fast-check';
import { CommandScanner } from './command-scanner';
import { encodeCommand, encodeValue } from './encoder';
import { InputBuffer } from './input-buffer';
import type { RespLimits } from './limits';
import { decodeReply } from './reply-decoder';
import { ReplyScanner } from './reply-scanner';

const LIMITS: RespLimits = {
  maxBulkLength: 40,
  maxMultibulkLength: 8,
  maxAggregateLength: 12,
  maxNestingDepth: 4,
  queryBufferLimit: 120,
  replyBufferLimit: 120,
  maxInlineLength: 50,
};

/** Runs `fn`; anything thrown must be one of resp's typed protocol errors. */
function onlyTypedErrors(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof DbproxyError) || !err.code.startsWith('DBP_ERR_RESP_')) throw err;
  }
}

/** A failed bound; plain checks keep thousands of runs fast. */
function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`bound broken: ${what}`);
}

/** Feeds chunks to a command scanner, checking after every scan that every bound held. */
function feedCommands(chunks: Buffer[]): void {
  const limits = LIMITS;
  const scanner = new CommandScanner(limits);
  const input = new InputBuffer(8);
  for (const chunk of chunks) {
    input.append(chunk, scanner.needBytes);
    const batch = scanner.scan(input.buffer, input.start, input.end);
    check(batch.consumed >= input.start && batch.consumed <= input.end, 'consumed within the input');
    for (let i = 0; i < batch.count; i++) {
      check(batch.frameEnd[i] - batch.frameStart[i] <= limits.queryBufferLimit, 'frame size');
      check(batch.argCount[i] <= limits.maxMultibulkLength, 'argument count');
      // Inline arguments are bounded by the line, bulk ones by maxBulkLength.
      const maxArg = batch.isInline(i) ? limits.maxInlineLength : limits.maxBulkLength;
      for (let k = 0; k < batch.argCount[i]; k++) {
        check(batch.length(i, k) <= maxArg, 'argument length');
        check(batch.offset(i, k) >= 0 && batch.offset(i, k) + batch.length(i, k) <= batch.source(i).length, 'argument inside its buffer');
      }
    }
    input.consume(batch.consumed);
    check(input.length <= limits.queryBufferLimit, 'pending bytes');
    // With no new bytes a scan makes no progress and emits nothing: it cannot spin or repeat a frame.
    const again = scanner.scan(input.buffer, input.start, input.end);
    check(again.count === 0 && again.consumed === input.start, 'idle rescan');
  }
}

/** Feeds chunks to a reply scanner and decodes every reply it finds. */
function feedReplies(chunks: Buffer[]): void {
  const limits = LIMITS;
  const scanner = new ReplyScanner(limits);
  const input = new InputBuffer(8);
  for (const chunk of chunks) {
    input.append(chunk, scanner.needBytes);
    const batch = scanner.scan(input.buffer, input.start, input.end);
    for (let i = 0; i < batch.count; i++) {
      check(batch.end[i] - batch.start[i] <= limits.replyBufferLimit, 'reply size');
      onlyTypedErrors(() => decodeReply(batch.buffer, batch.start[i], batch.end[i], limits));
    }
    input.consume(batch.consumed);
    check(input.length <= limits.replyBufferLimit, 'pending bytes');
    const again = scanner.scan(input.buffer, input.start, input.end);
    check(again.count === 0 && again.consumed === input.start, 'idle rescan');
  }
}

// Random bytes biased toward protocol characters, so the fuzzer gets past the first byte.
const protocolByte = fc.oneof(
  fc.constantFrom(...Buffer.from('*$+-:_#,(!=%~|>\r\n0123456789- "\'\\x\x00tf')),
  fc.integer({ min: 0, max: 255 }),
);
const junk = fc.array(fc.array(protocolByte, { maxLength: 60 }).map((a) => Buffer.from(a)), { minLength: 1, maxLength: 8 });

/** A valid encoding with a few bytes replaced, inserted or deleted. */
function mutated(valid: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer[]> {
  const edit = fc.tuple(fc.constantFrom('replace', 'insert', 'delete'), fc.double({ min: 0, max: 1, noNaN: true }), protocolByte);
  return fc.tuple(valid, fc.array(edit, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 16 })).map(([buf, edits, chunk]) => {
    const bytes = [...buf];
    for (const [kind, where, byte] of edits) {
      const at = Math.floor(where * bytes.length);
      if (kind === 'replace') bytes[at] = byte;
      else if (kind === 'insert') bytes.splice(at, 0, byte);
      else bytes.splice(at, 1);
    }
    const out = Buffer.from(bytes);
    const chunks: Buffer[] = [];
    for (let at = 0; at < out.length; at += chunk) chunks.push(out.subarray(at, at + chunk));
    return chunks;
  });
}

describe('fuzzing', () => {
  it('random bytes given to the command scanner raise only typed errors and never break a bound', () => {
    fc.assert(fc.property(junk, (chunks) => onlyTypedErrors(() => feedCommands(chunks))), { numRuns: 5000 });
  });

  it('random bytes given to the reply scanner and decoder raise only typed errors and never break a bound', () => {
    fc.assert(fc.property(junk, (chunks) => onlyTypedErrors(() => feedReplies(chunks))), { numRuns: 5000 });
  });

  it('random bytes given straight to the decoder raise only typed errors', () => {
    fc.assert(fc.property(junk, (chunks) => onlyTypedErrors(() => decodeReply(Buffer.concat(chunks)))), { numRuns: 5000 });
  });

  it('mutated valid commands raise only typed errors', () => {
    const command = fc.array(fc.oneof(fc.string({ maxLength: 10 }), fc.integer()), { minLength: 1, maxLength: 5 }).map(encodeCommand);
    fc.assert(fc.property(mutated(command), (chunks) => onlyTypedErrors(() => feedCommands(chunks))), { numRuns: 3000 });
  });

  it('mutated valid replies raise only typed errors', () => {
    const reply = fc
      .array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxLength: 5 })
      .map((items) => encodeValue({ type: 'map', entries: items.map((item) => [{ type: 'simple', value: 'k' }, typeof item === 'number' ? { type: 'integer', value: item } : { type: 'bulk', value: Buffer.from(item) }]) }));
    fc.assert(fc.property(mutated(reply), (chunks) => onlyTypedErrors(() => feedReplies(chunks))), { numRuns: 3000 });
  });

  it('a peer that never ends a frame is cut off at the bound, not buffered forever', () => {
    const element = `$30\r\n${'x'.repeat(30)}\r\n`;
    const cases = [
      ['*8\r\n', element, feedCommands, 'DBP_ERR_RESP_QUERY_BUFFER_LIMIT'],
      ['GET ', 'xxxxxxxx', feedCommands, 'DBP_ERR_RESP_INLINE_TOO_BIG'],
      ['*12\r\n', element, feedReplies, 'DBP_ERR_RESP_REPLY_BUFFER_LIMIT'],
      ['+', 'xxxxxxxx', feedReplies, 'DBP_ERR_RESP_BAD_REPLY_LINE'],
    ] as const;
    for (const [head, body, feed, code] of cases) {
      const chunks = [Buffer.from(head), ...Array.from({ length: 50 }, () => Buffer.from(body))];
      expect(() => feed(chunks)).toThrow(expect.objectContaining({ code }));
    }
  });
});
