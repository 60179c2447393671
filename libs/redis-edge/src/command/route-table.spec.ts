// Slots of keys (hash tags included) agree with libs/routing's redisSlot; hash tag rules.
import fc from 'fast-check';
import { redisSlot } from '@dbproxy/routing';
import { hashedPart, slotOfKey } from './route-table';

describe('slots of keys', () => {
  it('match redisSlot for any key bytes, hash tags included', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 8 }), (prefix, key) => {
        const buf = Buffer.concat([Buffer.from(prefix), Buffer.from(key)]);
        expect(slotOfKey(buf, prefix.length, key.length)).toBe(redisSlot(Buffer.from(key)));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (a, tag, c) => {
        const key = Buffer.from(`${a}{${tag}}${c}`);
        expect(slotOfKey(key, 0, key.length)).toBe(redisSlot(key));
      }),
    );
  });

  it('hash the first non-empty {...} only', () => {
    const part = (key: string): string => {
      const buf = Buffer.from(key);
      const [s, e] = hashedPart(buf, 0, buf.length);
      return buf.toString('utf8', s, e);
    };
    expect(part('user:{42}:profile')).toBe('42');
    expect(part('{}x{y}')).toBe('{}x{y}');
    expect(part('a{b')).toBe('a{b');
    expect(part('{a}{b}')).toBe('a');
    expect(part('plain')).toBe('plain');
  });
});
