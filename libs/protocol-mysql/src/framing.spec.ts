import fc from 'fast-check';
import { MAX_FRAME_PAYLOAD } from './cursor';
import { framePayload, PacketFramer, WireBatch, type MysqlPacket } from './framing';
import { chunkings, framePackets, returnsOrThrowsProtocolError, thrownCode } from './testing';

const wireOf = (...packets: [string, number][]): Buffer => Buffer.concat(packets.map(([text, seq]) => framePayload(Buffer.from(text), seq)));

describe('PacketFramer', () => {
  it('tells where each packet starts in the fed chunk, and -1 for packets assembled across chunks', () => {
    const framer = new PacketFramer();
    const wire = wireOf(['abc', 0], ['defgh', 1], ['ij', 2]);
    const seen: [number, string][] = [];
    const record = (p: MysqlPacket) => void seen.push([framer.wireOffset, p.payload.toString()]);
    framer.feed(wire.subarray(0, 17), record); // 7 + 9 bytes whole, then one byte of the third
    framer.feed(wire.subarray(17), record);
    expect(seen).toEqual([
      [0, 'abc'],
      [7, 'defgh'],
      [-1, 'ij'],
    ]);
    for (const [offset, text] of seen.slice(0, 2)) expect(wire.subarray(offset + 4, offset + 4 + text.length).toString()).toBe(text);
  });

  it('gives each packet its lengths and first payload byte without its views, and views that match them when read later', () => {
    const framer = new PacketFramer();
    const wire = wireOf(['\xfeab', 4], ['', 5], ['q', 6]);
    const seen: MysqlPacket[] = [];
    framer.feed(wire.subarray(0, 9), (p) => void seen.push(p)); // the first two whole, one byte of the third
    framer.feed(wire.subarray(9), (p) => void seen.push(p));
    expect(seen.map((p) => [p.wireLength, p.payloadLength, p.header, p.sequenceId, p.lastSequenceId])).toEqual([
      [8, 4, 0xc3, 4, 4], // '\xfe' is two UTF-8 bytes, c3 be
      [4, 0, -1, 5, 5],
      [5, 1, 0x71, 6, 6],
    ]);
    for (const p of seen) {
      expect(p.wire.length).toBe(p.wireLength);
      expect(p.payload.length).toBe(p.payloadLength);
      expect(p.payload.equals(p.wire.subarray(4))).toBe(true);
      expect(p.wire).toBe(p.wire); // made once
    }
    expect(Buffer.concat(seen.map((p) => p.wire)).equals(wire)).toBe(true);
  });

  const wire = wireOf(['select 1', 0], ['', 1], ['x'.repeat(300), 2]);

  it.each([...chunkings(wire)].map((c) => [c.name, c.chunks] as const))('frames three packets fed %s', (_name, chunks) => {
    const packets = framePackets(chunks);
    expect(packets.map((p) => [p.payload.toString(), p.sequenceId, p.lastSequenceId])).toEqual([
      ['select 1', 0, 0],
      ['', 1, 1],
      ['x'.repeat(300), 2, 2],
    ]);
    expect(Buffer.concat(packets.map((p) => p.wire)).equals(wire)).toBe(true);
  });

  it('hands out packets wholly inside a chunk as slices of it (zero copy)', () => {
    const seen: MysqlPacket[] = [];
    new PacketFramer().feed(wire, (p) => void seen.push(p));
    expect(seen).toHaveLength(3);
    for (const p of seen) {
      expect(p.wire.buffer).toBe(wire.buffer);
      expect(p.payload.buffer).toBe(wire.buffer);
    }
  });

  it('emits a zero-length packet whose header ends the chunk at once', () => {
    const seen: string[] = [];
    new PacketFramer().feed(Buffer.from('00000005', 'hex'), (p) => void seen.push(`${p.sequenceId}:${p.payload.length}`));
    expect(seen).toEqual(['5:0']);
  });

  it('reassembles a payload split across 0xFFFFFF-byte frames, fed whole and in odd chunks', () => {
    const payload = Buffer.alloc(MAX_FRAME_PAYLOAD + 100);
    for (let i = 0; i < payload.length; i += 997) payload[i] = i & 0xff;
    const big = Buffer.concat([framePayload(payload, 9), framePayload(Buffer.from('next'), 11)]);
    for (const step of [big.length, 65536, 1_000_003]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < big.length; at += step) chunks.push(big.subarray(at, at + step));
      const packets = framePackets(chunks);
      expect(packets.map((p) => [p.sequenceId, p.lastSequenceId, p.payload.length])).toEqual([
        [9, 10, payload.length],
        [11, 11, 4],
      ]);
      expect(packets[0].payload.equals(payload)).toBe(true);
      expect(packets[0].wire.equals(big.subarray(0, payload.length + 8))).toBe(true);
    }
  });

  it('reassembles a payload of exactly 0xFFFFFF bytes ended by an empty frame', () => {
    const payload = Buffer.alloc(MAX_FRAME_PAYLOAD, 7);
    const packets = framePackets([framePayload(payload, 0)]);
    expect(packets).toHaveLength(1);
    expect(packets[0].payload.length).toBe(MAX_FRAME_PAYLOAD);
    expect(packets[0].lastSequenceId).toBe(1);
  });

  it('refuses a packet over the maximum from its header alone, before buffering it', () => {
    const framer = new PacketFramer({ maxPacketSize: 1024 });
    const header = Buffer.from('01040000', 'hex'); // 1025 bytes announced
    expect(thrownCode(() => framer.feed(header, () => undefined))).toBe('DBP_ERR_MYSQL_PACKET_TOO_LARGE');
    expect(framer.bufferedBytes).toBe(0);
    expect(thrownCode(() => framer.feed(Buffer.of(0), () => undefined))).toBe('DBP_ERR_MYSQL_PACKET_TOO_LARGE');
  });

  it('refuses a multi-frame packet once its frames add up to more than the maximum', () => {
    const framer = new PacketFramer({ maxPacketSize: MAX_FRAME_PAYLOAD + 10 });
    const wire2 = framePayload(Buffer.alloc(MAX_FRAME_PAYLOAD + 11), 0);
    expect(thrownCode(() => framer.feed(wire2, () => undefined))).toBe('DBP_ERR_MYSQL_PACKET_TOO_LARGE');
  });

  it('accepts a header split over chunks then refuses the size', () => {
    const framer = new PacketFramer({ maxPacketSize: 10 });
    framer.feed(Buffer.of(0x0b), () => undefined);
    framer.feed(Buffer.of(0x00), () => undefined);
    expect(thrownCode(() => framer.feed(Buffer.of(0x00, 0x00), () => undefined))).toBe('DBP_ERR_MYSQL_PACKET_TOO_LARGE');
  });

  it('refuses a continuation frame with the wrong sequence id', () => {
    const good = framePayload(Buffer.alloc(MAX_FRAME_PAYLOAD + 1), 4);
    good[MAX_FRAME_PAYLOAD + 7] = 9;
    expect(thrownCode(() => new PacketFramer().feed(good, () => undefined))).toBe('DBP_ERR_MYSQL_SEQUENCE_MISMATCH');
  });

  it('stops when the handler returns false and gives back the unconsumed bytes', () => {
    const sslThenTls = Buffer.concat([framePayload(Buffer.alloc(32, 1), 1), Buffer.from('160301', 'hex')]);
    const seen: number[] = [];
    const rest = new PacketFramer().feed(sslThenTls, (p) => {
      seen.push(p.payload.length);
      return false;
    });
    expect(seen).toEqual([32]);
    expect(rest?.toString('hex')).toBe('160301');
  });

  it('only ever throws typed protocol errors on random input (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }), fc.integer({ min: 0, max: 300 }), (chunks, max) => {
        const framer = new PacketFramer({ maxPacketSize: max });
        let packets = 0;
        for (const c of chunks) {
          const outcome = returnsOrThrowsProtocolError(() => framer.feed(Buffer.from(c), () => void packets++));
          if (outcome !== 'ok') break;
        }
        expect(packets).toBeLessThanOrEqual(chunks.reduce((n, c) => n + c.length, 0) / 4);
      }),
    );
  });

  it('frames any sequence of payloads identically however the bytes are cut (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 6 }), fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1 }), (payloads, cuts) => {
        const bytes = Buffer.concat(payloads.map((p, i) => framePayload(p, i)));
        const chunks: Buffer[] = [];
        let at = 0;
        for (let i = 0; at < bytes.length; i++) {
          const n = cuts[i % cuts.length];
          chunks.push(bytes.subarray(at, at + n));
          at += n;
        }
        const packets = framePackets(chunks);
        expect(packets.map((p) => Buffer.from(p.payload).toString('hex'))).toEqual(payloads.map((p) => Buffer.from(p).toString('hex')));
      }),
    );
  });
});

describe('WireBatch', () => {
  it('merges slices adjacent in one chunk and keeps others apart', () => {
    const chunk = wireOf(['a', 1], ['bb', 2], ['ccc', 3]);
    const other = wireOf(['d', 4]);
    const batch = new WireBatch();
    new PacketFramer().feed(chunk, (p) => batch.push(p.wire));
    new PacketFramer().feed(other, (p) => batch.push(p.wire));
    expect(batch.byteLength).toBe(chunk.length + other.length);
    const slices = batch.take();
    expect(slices).toHaveLength(2);
    expect(slices[0].equals(chunk)).toBe(true);
    expect(slices[1].equals(other)).toBe(true);
    expect(batch.take()).toEqual([]);
  });
});
