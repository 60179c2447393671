import fc from 'fast-check';
import { encodeLenenc, lenencSize, MAX_FRAME_PAYLOAD, PacketReader, PacketWriter } from './cursor';
import { thrownCode } from './testing';

describe('PacketReader', () => {
  it('reads fixed-width little-endian integers', () => {
    const r = new PacketReader(Buffer.from('010203040506070809101112131415161718', 'hex'));
    expect(r.u8()).toBe(0x01);
    expect(r.u16()).toBe(0x0302);
    expect(r.u24()).toBe(0x060504);
    expect(r.u32()).toBe(0x10090807);
    expect(r.u64()).toBe(0x1817161514131211n);
    expect(r.atEnd()).toBe(true);
  });

  it('reads length-encoded integers in all four widths and NULL', () => {
    const r = new PacketReader(Buffer.from('fa' + 'fcfb00' + 'fd000001' + 'fe0000000001000000' + 'fb', 'hex'));
    expect(r.lenenc()).toBe(250);
    expect(r.lenenc()).toBe(251);
    expect(r.lenenc()).toBe(0x010000);
    expect(r.lenenc()).toBe(2 ** 32);
    expect(r.lenencOrNull()).toBeNull();
  });

  it('rejects the 0xFF prefix and NULL where a length is required', () => {
    expect(thrownCode(() => new PacketReader(Buffer.of(0xff)).lenenc())).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(thrownCode(() => new PacketReader(Buffer.of(0xfb)).lenenc())).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
  });

  it('refuses 8-byte lengths beyond Number.MAX_SAFE_INTEGER but keeps them as bigint', () => {
    const bytes = Buffer.from('feffffffffffffffff', 'hex');
    expect(thrownCode(() => new PacketReader(bytes).lenenc())).toBe('DBP_ERR_MYSQL_MALFORMED_PACKET');
    expect(new PacketReader(bytes).lenencBig()).toBe(0xffffffffffffffffn);
  });

  it('throws a typed truncation error instead of reading past the end', () => {
    const r = new PacketReader(Buffer.from('0a0b', 'hex'));
    expect(thrownCode(() => r.u32())).toBe('DBP_ERR_MYSQL_PACKET_TRUNCATED');
    expect(thrownCode(() => new PacketReader(Buffer.from('05616263', 'hex')).lenencBytes())).toBe('DBP_ERR_MYSQL_PACKET_TRUNCATED');
    expect(thrownCode(() => new PacketReader(Buffer.from('616263', 'hex')).nulString())).toBe('DBP_ERR_MYSQL_PACKET_TRUNCATED');
  });

  it('respects an end before the end of the buffer', () => {
    const r = new PacketReader(Buffer.from('6100620063', 'hex'), 0, 3);
    expect(r.nulString()).toBe('a');
    expect(thrownCode(() => r.nulString())).toBe('DBP_ERR_MYSQL_PACKET_TRUNCATED');
  });

  it('returns slices, not copies', () => {
    const buf = Buffer.from('03616263', 'hex');
    const bytes = new PacketReader(buf).lenencBytes();
    expect(bytes.buffer).toBe(buf.buffer);
    expect(bytes.toString()).toBe('abc');
  });
});

describe('PacketWriter', () => {
  it('round-trips length-encoded integers with the reader (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (n) => {
        const w = new PacketWriter(8);
        w.begin(0).lenenc(n);
        w.end();
        const out = w.flush();
        expect(out.length - 4).toBe(lenencSize(n));
        expect(new PacketReader(out, 4).lenencBig()).toBe(n);
        if (n <= BigInt(Number.MAX_SAFE_INTEGER)) expect(encodeLenenc(Number(n))).toEqual(out.subarray(4));
      }),
    );
  });

  it('frames packets with length and sequence id and returns the next id', () => {
    const w = new PacketWriter();
    expect(w.begin(7).string('hi').end()).toBe(8);
    expect(w.begin(255).u8(1).end()).toBe(0);
    expect(w.flush().toString('hex')).toBe('020000076869' + '010000ff01');
  });

  it('keeps a flushed buffer intact while writing the next packets', () => {
    const w = new PacketWriter(4);
    w.begin(0).string('first');
    w.end();
    const first = w.flush();
    w.begin(0).string('second');
    w.end();
    expect(first.subarray(4).toString()).toBe('first');
    expect(w.flush().subarray(4).toString()).toBe('second');
  });

  it('splits a payload of exactly 0xFFFFFF bytes into a full frame and an empty one', () => {
    const w = new PacketWriter();
    w.begin(3).bytes(Buffer.alloc(MAX_FRAME_PAYLOAD, 0x61));
    expect(w.end()).toBe(5);
    const out = w.flush();
    expect(out.length).toBe(MAX_FRAME_PAYLOAD + 8);
    expect(out.readUIntLE(0, 3)).toBe(MAX_FRAME_PAYLOAD);
    expect(out[3]).toBe(3);
    expect(out.readUIntLE(MAX_FRAME_PAYLOAD + 4, 3)).toBe(0);
    expect(out[MAX_FRAME_PAYLOAD + 7]).toBe(4);
  });

  it('splits a payload over 32 MiB into three frames, payload bytes in order', () => {
    const length = 2 * MAX_FRAME_PAYLOAD + 10;
    const payload = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i += 4096) payload.writeUInt32LE(i, i);
    const w = new PacketWriter();
    w.begin(250).u8(0x99).bytes(payload.subarray(1));
    expect(w.end()).toBe(253);
    const out = w.flush();
    const frames = [0, MAX_FRAME_PAYLOAD + 4, 2 * (MAX_FRAME_PAYLOAD + 4)];
    expect(frames.map((at) => out.readUIntLE(at, 3))).toEqual([MAX_FRAME_PAYLOAD, MAX_FRAME_PAYLOAD, 10]);
    expect(frames.map((at) => out[at + 3])).toEqual([250, 251, 252]);
    const joined = Buffer.concat(frames.map((at, i) => out.subarray(at + 4, at + 4 + (i < 2 ? MAX_FRAME_PAYLOAD : 10))));
    expect(joined[0]).toBe(0x99);
    expect(joined.subarray(1).equals(payload.subarray(1))).toBe(true);
  });

  it('refuses to be used out of order', () => {
    const w = new PacketWriter();
    expect(thrownCode(() => w.end())).toBe('DBP_ERR_MYSQL_INVALID_STATE');
    w.begin(0);
    expect(thrownCode(() => w.begin(1))).toBe('DBP_ERR_MYSQL_INVALID_STATE');
    expect(thrownCode(() => w.flush())).toBe('DBP_ERR_MYSQL_INVALID_STATE');
  });

  it('refuses negative length-encoded integers', () => {
    expect(thrownCode(() => new PacketWriter().lenenc(-1))).toBe('DBP_ERR_MYSQL_INVALID_VALUE');
  });
});
