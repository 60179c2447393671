import { DbproxyError } from '@dbproxy/util';
import fc from 'fast-check';
import { MessageWriter } from '../cursor';
import { PgFramer, type Frame } from '../framer';
import { be, chunkings, collect, frontendMessageArb, frontendSamples, startupMessageArb, startupSamples, typed, untyped } from '../testing';
import { decodeFrontendMessage, encodeFrontendMessages, writeFrontendMessage } from './codec';
import { FrontendDecoder } from './decoder';
import type { AuthResponseKind, FrontendMessage, StartupPacket } from './messages';

jest.setTimeout(60_000);

function decodeStream(chunks: readonly Buffer[], auths: readonly (AuthResponseKind | undefined)[] = []): FrontendMessage[] {
  const decoder = new FrontendDecoder();
  let index = 0;
  decoder.expectAuthResponse(auths[0] ?? 'password');
  return collect<FrontendMessage>(chunks, (chunk, emit) =>
    decoder.push(chunk, (message) => {
      emit(message);
      index++;
      decoder.expectAuthResponse(auths[index] ?? 'password');
    }),
  );
}

function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof DbproxyError) return err.code;
    throw err;
  }
  throw new Error('expected a typed error');
}

const startup: StartupPacket = { type: 'StartupMessage', protocolVersion: 196608, parameters: new Map([['user', 'u']]) };

describe('frontend messages: wire bytes', () => {
  it('encodes exactly what the protocol documents', () => {
    expect(encodeFrontendMessages({ type: 'Query', sql: 'SELECT 1' })).toEqual(typed('Q', be.cstr('SELECT 1')));
    expect(encodeFrontendMessages({ type: 'SSLRequest' })).toEqual(Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]));
    expect(encodeFrontendMessages({ type: 'GSSENCRequest' })).toEqual(Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30]));
    expect(encodeFrontendMessages({ type: 'CancelRequest', processId: 7, secretKey: 9 })).toEqual(
      untyped(be.i32(80877102), be.i32(7), be.i32(9)),
    );
    expect(encodeFrontendMessages(startupSamples[1])).toEqual(
      untyped(be.i32(196610), be.cstr('user'), be.cstr('u'), be.cstr('_pq_.x'), be.cstr('1'), be.u8(0)),
    );
    expect(encodeFrontendMessages(frontendSamples[4].message)).toEqual(
      typed('B', be.cstr('p1'), be.cstr('s1'), be.i16(3), be.i16(0), be.i16(1), be.i16(1), be.i16(3), be.i32(2), be.str('42'), be.i32(-1), be.i32(0), be.i16(1), be.i16(1)),
    );
    expect(encodeFrontendMessages({ type: 'Parse', statement: '', sql: 'x', paramTypes: [3000000000] })).toEqual(
      typed('P', be.cstr(''), be.cstr('x'), be.i16(1), be.u32(3000000000)),
    );
    expect(encodeFrontendMessages({ type: 'Execute', portal: '', maxRows: 0 }, { type: 'Sync' })).toEqual(
      Buffer.concat([typed('E', be.cstr(''), be.i32(0)), typed('S')]),
    );
    expect(encodeFrontendMessages({ type: 'SASLInitialResponse', mechanism: 'M', data: null })).toEqual(typed('p', be.cstr('M'), be.i32(-1)));
  });
});

describe('frontend messages: decoding', () => {
  it.each(startupSamples.map((m) => [m.type, m] as const))('decodes %s whole, split at every byte and byte by byte', (_t, message) => {
    for (const { label, chunks } of chunkings(encodeFrontendMessages(message))) {
      expect([label, decodeStream(chunks)]).toEqual([label, [message]]);
    }
  });

  it.each(frontendSamples.map((s, i) => [`${s.message.type} #${i}`, s] as const))('decodes %s fed every way', (_t, sample) => {
    const bytes = encodeFrontendMessages(startup, sample.message);
    for (const { label, chunks } of chunkings(bytes)) {
      expect([label, decodeStream(chunks, [undefined, sample.auth])]).toEqual([label, [startup, sample.message]]);
    }
  });

  it('decodes a startup and every typed message in one chunk, and split at every byte', () => {
    const messages = [startup, ...frontendSamples.map((s) => s.message)];
    const auths = [undefined, ...frontendSamples.map((s) => s.auth)];
    const bytes = encodeFrontendMessages(...messages);
    expect(decodeStream([bytes], auths)).toEqual(messages);
    // Re-encoding is a fast exact check for the hundreds of other feedings (toEqual on Buffers is slow).
    for (const { label, chunks } of chunkings(bytes)) {
      const decoded = decodeStream(chunks, auths);
      if (!encodeFrontendMessages(...decoded).equals(bytes)) expect([label, decoded]).toEqual([label, messages]);
      expect(decoded).toHaveLength(messages.length);
    }
  });

  it('hands out values as slices of the received chunk (zero-copy)', () => {
    const chunk = encodeFrontendMessages(startup, frontendSamples[4].message);
    const frames: Frame[] = [];
    const decoded: FrontendMessage[] = [];
    new FrontendDecoder().push(chunk, (m, f) => (decoded.push(m), frames.push(f)));
    const bind = decoded[1];
    if (bind.type !== 'Bind') throw new Error('expected Bind');
    expect(bind.params[0]?.buffer).toBe(chunk.buffer);
    expect(frames[1].bytes.buffer).toBe(chunk.buffer);
  });

  it('round-trips any message through encode and a split stream (property)', () => {
    fc.assert(
      fc.property(startupMessageArb, fc.array(frontendMessageArb, { maxLength: 8 }), fc.nat(), (first, samples, cut) => {
        const messages = [first, ...samples.map((s) => s.message)];
        const bytes = encodeFrontendMessages(...messages);
        const at = cut % (bytes.length + 1);
        const decoded = decodeStream([bytes.subarray(0, at), bytes.subarray(at)], [undefined, ...samples.map((s) => s.auth)]);
        expect(decoded).toEqual(messages);
      }),
      { numRuns: 400 },
    );
  });
});

describe('frontend messages: malformed input', () => {
  const frameOf = (bytes: Buffer, phase: 'startup' | 'typed' = 'typed'): Frame => {
    const frames: Frame[] = [];
    new PgFramer({ phase }).push(bytes, (f) => frames.push(f));
    return frames[0];
  };

  it('rejects protocol versions other than 3.x', () => {
    expect(thrownCode(() => decodeFrontendMessage(frameOf(untyped(be.i32(0x20000), be.u8(0)), 'startup')))).toBe('DBP_ERR_PG_UNSUPPORTED_PROTOCOL');
  });

  it('rejects a startup whose parameter list is not terminated, or has a name without value', () => {
    expect(thrownCode(() => decodeFrontendMessage(frameOf(untyped(be.i32(196608), be.cstr('user'), be.cstr('u')), 'startup')))).toBe('DBP_ERR_PG_MALFORMED');
    expect(thrownCode(() => decodeFrontendMessage(frameOf(untyped(be.i32(196608), be.cstr('user'), be.u8(0)), 'startup')))).toBe('DBP_ERR_PG_MALFORMED');
    expect(thrownCode(() => decodeFrontendMessage(frameOf(untyped(be.i32(196608), be.u8(0), be.u8(1)), 'startup')))).toBe('DBP_ERR_PG_MALFORMED');
  });

  it.each([
    ['unknown type byte', typed('z'), 'DBP_ERR_PG_UNKNOWN_MESSAGE'],
    ['Query without terminator', typed('Q', be.str('SELECT')), 'DBP_ERR_PG_MALFORMED'],
    ['Sync with a body', typed('S', be.u8(1)), 'DBP_ERR_PG_MALFORMED'],
    ['Describe of an unknown target', typed('D', be.str('X'), be.cstr('n')), 'DBP_ERR_PG_MALFORMED'],
    ['Bind with 2 formats for 3 values', typed('B', be.cstr(''), be.cstr(''), be.i16(2), be.i16(0), be.i16(0), be.i16(3), be.i32(-1), be.i32(-1), be.i32(-1), be.i16(0)), 'DBP_ERR_PG_MALFORMED'],
    ['Bind with a value longer than the message', typed('B', be.cstr(''), be.cstr(''), be.i16(0), be.i16(1), be.i32(100), be.i16(0)), 'DBP_ERR_PG_MALFORMED'],
    ['Bind with a negative value length', typed('B', be.cstr(''), be.cstr(''), be.i16(0), be.i16(1), be.i32(-2), be.i16(0)), 'DBP_ERR_PG_MALFORMED'],
    ['Execute cut short', typed('E', be.cstr('')), 'DBP_ERR_PG_MALFORMED'],
  ])('rejects %s', (_name, bytes, code) => {
    expect(thrownCode(() => decodeFrontendMessage(frameOf(bytes)))).toBe(code);
  });

  it('keeps failing after a protocol error instead of resynchronising on garbage', () => {
    const decoder = new FrontendDecoder();
    expect(thrownCode(() => decoder.push(untyped(be.i32(0x20000), be.u8(0)), () => undefined))).toBe('DBP_ERR_PG_UNSUPPORTED_PROTOCOL');
    expect(thrownCode(() => decoder.push(encodeFrontendMessages(startup), () => undefined))).toBe('DBP_ERR_PG_UNSUPPORTED_PROTOCOL');
  });

  it('refuses to encode what cannot be framed, leaving the writer clean', () => {
    const writer = new MessageWriter();
    writeFrontendMessage(writer, { type: 'Sync' });
    expect(thrownCode(() => writeFrontendMessage(writer, { type: 'Query', sql: 'a\0b' }))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    expect(thrownCode(() => writeFrontendMessage(writer, { type: 'Parse', statement: '', sql: '', paramTypes: [-1] }))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    const tooMany = Array.from({ length: 65536 }, () => null);
    expect(thrownCode(() => writeFrontendMessage(writer, { type: 'Bind', portal: '', statement: '', paramFormats: [], params: tooMany, resultFormats: [] }))).toBe(
      'DBP_ERR_PG_ENCODE_INVALID',
    );
    expect(thrownCode(() => writeFrontendMessage(writer, { type: 'Bogus' } as unknown as FrontendMessage))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    expect(writer.flush()).toEqual(typed('S'));
  });
});
