// Test support: builds wire bytes by hand, independently of the encoders under test.
import { Buffer } from 'node:buffer';

export const be = {
  u8: (n: number) => Buffer.from([n]),
  i16(n: number) {
    const b = Buffer.alloc(2);
    b.writeInt16BE(n);
    return b;
  },
  i32(n: number) {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  },
  u32(n: number) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  },
  cstr: (s: string) => Buffer.concat([Buffer.from(s, 'utf8'), Buffer.from([0])]),
  str: (s: string) => Buffer.from(s, 'utf8'),
};

/** A typed message: type byte, int32 length (counting itself), body. */
export function typed(code: string, ...body: Buffer[]): Buffer {
  const payload = Buffer.concat(body);
  return Buffer.concat([Buffer.from(code, 'latin1'), be.i32(payload.length + 4), payload]);
}

/** A startup-phase packet: int32 length (counting itself), body. */
export function untyped(...body: Buffer[]): Buffer {
  const payload = Buffer.concat(body);
  return Buffer.concat([be.i32(payload.length + 4), payload]);
}
