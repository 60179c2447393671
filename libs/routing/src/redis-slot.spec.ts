// Redis Cluster slots: CRC16/XMODEM check value, known slots, and hash-tag rules.
import fc from 'fast-check';
import { crc16, redisSlot } from './redis-slot';

describe('redisSlot', () => {
  it('computes CRC16/XMODEM', () => {
    expect(crc16(Buffer.from('123456789'))).toBe(0x31c3);
  });

  it('matches the slots Redis reports', () => {
    expect(redisSlot('foo')).toBe(12182);
    expect(redisSlot('somekey')).toBe(11058);
    expect(redisSlot(Buffer.from('foo'))).toBe(12182);
  });

  it('hashes only the first non-empty hash tag', () => {
    expect(redisSlot('{user1000}.following')).toBe(redisSlot('{user1000}.followers'));
    expect(redisSlot('{user1000}.following')).toBe(redisSlot('user1000'));
    expect(redisSlot('foo{}{bar}')).toBe(redisSlot('foo{}{bar}')); // empty first tag: whole key
    expect(redisSlot('foo{}{bar}')).not.toBe(redisSlot('bar'));
    expect(redisSlot('foo{{bar}}zap')).toBe(redisSlot('{bar'));
    expect(redisSlot('foo{bar}{zap}')).toBe(redisSlot('bar'));
    expect(redisSlot('{')).toBe(crc16(Buffer.from('{')) & 16383);
  });

  it('always returns a slot in [0, 16384)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const slot = redisSlot(Buffer.from(bytes));
        expect(slot).toBeGreaterThanOrEqual(0);
        expect(slot).toBeLessThan(16384);
      }),
    );
  });
});
