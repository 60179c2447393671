import fc from 'fast-check';
import { encodeCommand, encodedLength, encodeValue } from './encoder';
import { decodeReply } from './reply-decoder';
import { scanCommands, scanReplies } from './testing';
import type { RespValue } from './value';

const noCrLf = (s: string): string => s.replace(/[\r\n]/g, ' ');
const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const bytes = fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a));
const unsafeBigInt = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).filter((n) => n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER));

const scalar: fc.Arbitrary<RespValue> = fc.oneof(
  text.map((s) => ({ type: 'simple', value: noCrLf(s) }) as const),
  fc.tuple(text, fc.boolean()).map(([s, bulk]) => ({ type: 'error', message: bulk ? s : noCrLf(s), bulk }) as const),
  fc.oneof(fc.maxSafeInteger(), unsafeBigInt).map((value) => ({ type: 'integer', value }) as const),
  bytes.map((value) => ({ type: 'bulk', value }) as const),
  fc.constantFrom('bulk', 'array', 'null').map((form) => ({ type: 'null', form }) as const),
  fc.boolean().map((value) => ({ type: 'boolean', value }) as const),
  fc.double().map((value) => ({ type: 'double', value }) as const),
  fc.bigInt().map((value) => ({ type: 'bignum', value }) as const),
  fc.tuple(fc.constantFrom('txt', 'mkd'), bytes).map(([format, value]) => ({ type: 'verbatim', format, value }) as const),
);

const { value: respValue } = fc.letrec<{ value: RespValue; aggregate: RespValue }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', maxDepth: 5 }, scalar, tie('aggregate')),
  aggregate: fc.oneof(
    fc.array(tie('value'), { maxLength: 4 }).map((items) => ({ type: 'array', items }) as const),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => ({ type: 'set', items }) as const),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => ({ type: 'push', items }) as const),
    fc.array(fc.tuple(tie('value'), tie('value')), { maxLength: 3 }).map((entries) => ({ type: 'map', entries }) as const),
    fc
      .tuple(fc.array(fc.tuple(tie('value'), tie('value')), { maxLength: 2 }), tie('value'))
      .map(([entries, value]) => ({ type: 'attribute', entries, value }) as const),
  ),
}));

/** Cuts `buf` at the given fractions of its length. */
function cut(buf: Buffer, fractions: number[]): Buffer[] {
  const points = [...new Set(fractions.map((f) => Math.floor(f * buf.length)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const p of points) {
    chunks.push(buf.subarray(at, p));
    at = p;
  }
  chunks.push(buf.subarray(at));
  return chunks.filter((c) => c.length > 0);
}
const fractions = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 });

describe('round trips', () => {
  it('encode -> scan (any chunking) -> decode gives back random nested values', () => {
    fc.assert(
      fc.property(fc.array(respValue, { minLength: 1, maxLength: 4 }), fractions, fc.boolean(), (values, cuts, moving) => {
        const encoded = values.map(encodeValue);
        encoded.forEach((buf, i) => expect(buf.length).toBe(encodedLength(values[i])));
        const { replies, rest } = scanReplies(cut(Buffer.concat(encoded), cuts), {}, moving);
        expect(rest).toBe(0);
        expect(replies.map((r) => r.frame)).toEqual(encoded);
        expect(replies.map((r) => decodeReply(r.frame))).toEqual(values);
      }),
      { numRuns: 400 },
    );
  });

  it('encodeCommand -> scan (any chunking) gives back every argument byte for byte', () => {
    const arg = fc.oneof(bytes, text, fc.integer());
    fc.assert(
      fc.property(fc.array(fc.array(arg, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }), fractions, fc.boolean(), (commands, cuts, moving) => {
        const encoded = commands.map(encodeCommand);
        const { commands: scanned, rest } = scanCommands(cut(Buffer.concat(encoded), cuts), {}, moving);
        expect(rest).toBe(0);
        expect(scanned.map((c) => c.frame)).toEqual(encoded);
        expect(scanned.map((c) => c.args)).toEqual(commands.map((args) => args.map((a) => (Buffer.isBuffer(a) ? a : Buffer.from(String(a))))));
      }),
      { numRuns: 300 },
    );
  });

  it('inline lines quoted the way redis-cli prints values scan back to the original bytes', () => {
    // Quotes like redis-cli's sdscatrepr: printable bytes as is, the rest as escapes.
    const repr = (b: Buffer): string => {
      let out = '"';
      for (const c of b) {
        if (c === 0x5c || c === 0x22) out += `\\${String.fromCharCode(c)}`;
        else if (c === 0x0a) out += '\\n';
        else if (c === 0x0d) out += '\\r';
        else if (c === 0x09) out += '\\t';
        else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c);
        else out += `\\x${c.toString(16).padStart(2, '0')}`;
      }
      return `${out}"`;
    };
    const blanks = fc.constantFrom(' ', '  ', '\t', ' \t ');
    fc.assert(
      fc.property(fc.array(fc.tuple(bytes, blanks), { minLength: 1, maxLength: 5 }), fc.constantFrom('\r\n', '\n'), fractions, (args, eol, cuts) => {
        const line = Buffer.from(args.map(([a, sep]) => repr(a) + sep).join('') + eol, 'latin1');
        const { commands, rest } = scanCommands(cut(line, cuts));
        expect(rest).toBe(0);
        expect(commands).toHaveLength(1);
        expect(commands[0].args).toEqual(args.map(([a]) => a));
      }),
      { numRuns: 300 },
    );
  });
});
