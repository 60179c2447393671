import { DbproxyError } from '@dbproxy/util';
import { PgFramer, type Frame } from './framer';
import { be, chunkings, collect, typed, untyped } from './testing';

const frames = (framer: PgFramer, chunks: readonly Buffer[]) => collect<Frame>(chunks, (c, emit) => framer.push(c, emit));
const codeOf = (err: unknown) => (err instanceof DbproxyError ? err.code : String(err));
function errorOf(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

const query = typed('Q', be.cstr('SELECT 1'));
const sync = typed('S');
const dataRow = typed('D', be.i16(1), be.i32(3), be.str('abc'));

describe('PgFramer, typed phase', () => {
  it('cuts several messages in one chunk into zero-copy slices of it', () => {
    const chunk = Buffer.concat([query, sync, dataRow]);
    const out = frames(new PgFramer(), [chunk]);
    expect(out.map((f) => f.code)).toEqual([0x51, 0x53, 0x44]);
    expect(out.map((f) => f.bytes)).toEqual([query, sync, dataRow]);
    for (const f of out) expect(f.bytes.buffer).toBe(chunk.buffer);
    expect(out[0].payload).toEqual(be.cstr('SELECT 1'));
  });

  it.each(chunkings(Buffer.concat([query, sync, dataRow])))('yields the same frames fed $label', ({ chunks }) => {
    const framer = new PgFramer();
    const out = frames(framer, chunks);
    expect(out.map((f) => f.bytes)).toEqual([query, sync, dataRow]);
    expect(framer.buffered).toBe(0);
  });

  it.each(chunkings(Buffer.concat([query, sync, dataRow])))('hands the same messages over as ranges (pushMessages) fed $label', ({ chunks }) => {
    const framer = new PgFramer();
    const out: { code: number; bytes: Buffer }[] = [];
    for (const chunk of chunks) framer.pushMessages(chunk, (code, buf, start, end) => out.push({ code, bytes: Buffer.from(buf.subarray(start, end)) }));
    expect(out.map((m) => m.code)).toEqual([0x51, 0x53, 0x44]);
    expect(out.map((m) => m.bytes)).toEqual([query, sync, dataRow]);
    expect(framer.buffered).toBe(0);
  });

  it('pushMessages refuses a bad length as push does, and keeps refusing', () => {
    const framer = new PgFramer({ maxMessageSize: 64 });
    const header = Buffer.concat([Buffer.from('D'), be.i32(1_000_000_000)]);
    const err = errorOf(() => framer.pushMessages(header, () => undefined));
    expect(codeOf(err)).toBe('DBP_ERR_PG_MESSAGE_TOO_LARGE');
    expect(() => framer.pushMessages(sync, () => undefined)).toThrow(err as Error);
  });

  it('refuses a declared length above the limit before buffering the body', () => {
    const framer = new PgFramer({ maxMessageSize: 64 });
    const header = Buffer.concat([Buffer.from('D'), be.i32(1_000_000_000)]);
    const err = errorOf(() => framer.push(header, () => undefined));
    expect(codeOf(err)).toBe('DBP_ERR_PG_MESSAGE_TOO_LARGE');
    expect(framer.buffered).toBe(0);
    expect(() => framer.push(sync, () => undefined)).toThrow(err as Error);
  });

  it('accepts a frame of exactly the limit', () => {
    const message = typed('d', Buffer.alloc(59));
    expect(frames(new PgFramer({ maxMessageSize: 64 }), [message])).toHaveLength(1);
  });

  it('refuses lengths shorter than the length field', () => {
    const bad = Buffer.concat([Buffer.from('Q'), be.i32(3)]);
    expect(codeOf(errorOf(() => new PgFramer().push(bad, () => undefined)))).toBe('DBP_ERR_PG_INVALID_LENGTH');
  });

  it('holds a partial header across chunks', () => {
    const framer = new PgFramer();
    expect(frames(framer, [query.subarray(0, 3)])).toHaveLength(0);
    expect(framer.buffered).toBe(3);
    expect(frames(framer, [query.subarray(3)])[0].bytes).toEqual(query);
  });
});

describe('PgFramer, startup phase', () => {
  const startup = untyped(be.i32(196608), be.cstr('user'), be.cstr('u'), be.u8(0));
  const ssl = untyped(be.i32(80877103));

  it('reads a StartupMessage then switches to typed messages', () => {
    const framer = new PgFramer({ phase: 'startup' });
    const out = frames(framer, [Buffer.concat([startup, query])]);
    expect(out.map((f) => [f.kind, f.code])).toEqual([
      ['startup', 196608],
      ['typed', 0x51],
    ]);
    expect(framer.phase).toBe('typed');
  });

  it('stays in the startup phase after SSLRequest, for the startup that follows a refusal', () => {
    const framer = new PgFramer({ phase: 'startup' });
    expect(frames(framer, [ssl])[0].code).toBe(80877103);
    expect(framer.phase).toBe('startup');
    expect(frames(framer, [startup])[0].code).toBe(196608);
  });

  it.each([
    ['SSLRequest', untyped(be.i32(80877103))],
    ['GSSENCRequest', untyped(be.i32(80877104))],
    ['CancelRequest', untyped(be.i32(80877102), be.i32(1), be.i32(2))],
  ])('refuses bytes pipelined behind %s (CVE-2021-23214)', (_name, request) => {
    const err = errorOf(() => new PgFramer({ phase: 'startup' }).push(Buffer.concat([request, startup]), () => undefined));
    expect(codeOf(err)).toBe('DBP_ERR_PG_UNEXPECTED_DATA');
  });

  it('judges a startup length as soon as its four bytes arrive, whole or byte by byte (a Terminate sent before the startup)', () => {
    const terminate = Buffer.from([0x58, 0, 0, 0, 4]);
    expect(codeOf(errorOf(() => new PgFramer({ phase: 'startup' }).push(terminate, () => undefined)))).toBe('DBP_ERR_PG_MESSAGE_TOO_LARGE');
    const framer = new PgFramer({ phase: 'startup' });
    const short = be.i32(3);
    for (let i = 0; i < 3; i++) framer.push(short.subarray(i, i + 1), () => undefined);
    expect(codeOf(errorOf(() => framer.push(short.subarray(3), () => undefined)))).toBe('DBP_ERR_PG_INVALID_LENGTH');
  });

  it('checks the fixed lengths of requests and the startup size limit', () => {
    const longSsl = untyped(be.i32(80877103), be.i32(0));
    expect(codeOf(errorOf(() => new PgFramer({ phase: 'startup' }).push(longSsl, () => undefined)))).toBe('DBP_ERR_PG_INVALID_LENGTH');
    const huge = Buffer.concat([be.i32(10001), be.i32(196608)]);
    expect(codeOf(errorOf(() => new PgFramer({ phase: 'startup' }).push(huge, () => undefined)))).toBe('DBP_ERR_PG_MESSAGE_TOO_LARGE');
    const short = Buffer.concat([be.i32(7), be.i32(196608)]);
    expect(codeOf(errorOf(() => new PgFramer({ phase: 'startup' }).push(short, () => undefined)))).toBe('DBP_ERR_PG_INVALID_LENGTH');
  });

  it.each(chunkings(Buffer.concat([startup, query, sync])))('frames startup + messages fed $label', ({ chunks }) => {
    const out = frames(new PgFramer({ phase: 'startup' }), chunks);
    expect(out.map((f) => f.bytes)).toEqual([startup, query, sync]);
  });
});

describe('PgFramer, encryption answer', () => {
  it("reads the one-byte 'N' and then typed messages", () => {
    const framer = new PgFramer();
    framer.expectEncryptionResponse();
    const out = frames(framer, [Buffer.concat([Buffer.from('N'), sync])]);
    expect(out.map((f) => [f.kind, f.code])).toEqual([
      ['encryption-response', 0x4e],
      ['typed', 0x53],
    ]);
  });

  it("refuses plaintext bytes behind an 'S' (CVE-2021-23222)", () => {
    const framer = new PgFramer();
    framer.expectEncryptionResponse();
    const err = errorOf(() => framer.push(Buffer.concat([Buffer.from('S'), sync]), () => undefined));
    expect(codeOf(err)).toBe('DBP_ERR_PG_UNEXPECTED_DATA');
  });

  it('refuses any other answer byte', () => {
    const framer = new PgFramer();
    framer.expectEncryptionResponse();
    expect(codeOf(errorOf(() => framer.push(Buffer.from('X'), () => undefined)))).toBe('DBP_ERR_PG_MALFORMED');
  });

  it('will not change phase with a partial frame buffered', () => {
    const framer = new PgFramer();
    framer.push(query.subarray(0, 2), () => undefined);
    expect(codeOf(errorOf(() => framer.expectStartup()))).toBe('DBP_ERR_PG_UNEXPECTED_DATA');
  });
});

describe('PgFramer, handing over to raw forwarding', () => {
  it('stops after the startup packet and returns the rest of the chunk untouched', () => {
    const startup = untyped(be.i32(196608), be.cstr('user'), be.cstr('u'), be.u8(0));
    const framer = new PgFramer({ phase: 'startup' });
    const chunk = Buffer.concat([startup, query, sync.subarray(0, 2)]);
    const seen: Frame[] = [];
    framer.push(chunk, (frame) => {
      seen.push(frame);
      framer.stop();
    });
    expect(seen.map((f) => f.bytes)).toEqual([startup]);
    const rest = framer.takeRemainder();
    expect(rest).toEqual(Buffer.concat([query, sync.subarray(0, 2)]));
    expect(rest.buffer).toBe(chunk.buffer);
    expect(framer.takeRemainder()).toHaveLength(0);
    expect(codeOf(errorOf(() => framer.push(sync, () => undefined)))).toBe('DBP_ERR_PG_UNEXPECTED_DATA');
  });

  it('returns an empty remainder when the frame ended the chunk, also after split delivery', () => {
    const framer = new PgFramer();
    framer.push(query.subarray(0, 4), () => undefined);
    framer.push(query.subarray(4), () => framer.stop());
    expect(framer.takeRemainder()).toHaveLength(0);
  });
});
