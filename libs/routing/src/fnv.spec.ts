// FNV-1a 64 against published vectors and a bigint reference, including non-ASCII text.
import fc from 'fast-check';
import { fnv1a64, fnv1a64Hex, fnv1a64Mod } from './fnv';

function reference(text: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

describe('fnv1a64', () => {
  it('matches the published FNV-1a 64 test vectors', () => {
    expect(fnv1a64('')).toBe(0xcbf29ce484222325n);
    expect(fnv1a64('a')).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64('foobar')).toBe(0x85944171f73967e8n);
    expect(fnv1a64Hex('foobar')).toBe('85944171f73967e8');
  });

  it('hashes the UTF-8 bytes of any string, like the bigint reference', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.integer({ min: 1, max: 1000 }), (text, n) => {
        const expected = reference(text);
        expect(fnv1a64(text)).toBe(expected);
        expect(fnv1a64Mod(text, n)).toBe(Number(expected % BigInt(n)));
      }),
    );
  });

  it('encodes a lone surrogate as U+FFFD, like Buffer.from', () => {
    expect(fnv1a64('a\ud800b')).toBe(reference('a\ud800b'));
  });
});
