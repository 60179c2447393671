import { DbproxyError } from '@dbproxy/util';
import fc from 'fast-check';
import { MessageWriter } from '../cursor';
import { PgFramer, type Frame } from '../framer';
import { backendMessageArb, backendSamples, be, chunkings, collect, typed } from '../testing';
import { decodeBackendMessage, encodeBackendMessages, writeBackendMessage } from './codec';
import { BackendDecoder } from './decoder';
import type { BackendMessage } from './messages';
import { passwordAuthenticationFailed, pgError, pgNotice } from './notice';
import { SqlState, sqlStateForError } from './sql-state';

jest.setTimeout(60_000);

const decodeStream = (chunks: readonly Buffer[]): BackendMessage[] => {
  const decoder = new BackendDecoder();
  return collect<BackendMessage>(chunks, (chunk, emit) => decoder.push(chunk, emit));
};

function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof DbproxyError) return err.code;
    throw err;
  }
  throw new Error('expected a typed error');
}

const frameOf = (bytes: Buffer): Frame => {
  const frames: Frame[] = [];
  new PgFramer().push(bytes, (f) => frames.push(f));
  return frames[0];
};

describe('backend messages: wire bytes', () => {
  it('encodes exactly what the protocol documents', () => {
    expect(encodeBackendMessages({ type: 'ReadyForQuery', status: 'T' })).toEqual(typed('Z', be.str('T')));
    expect(encodeBackendMessages({ type: 'AuthenticationMD5Password', salt: Buffer.from([9, 8, 7, 6]) })).toEqual(
      typed('R', be.i32(5), Buffer.from([9, 8, 7, 6])),
    );
    expect(encodeBackendMessages({ type: 'AuthenticationSASL', mechanisms: ['SCRAM-SHA-256'] })).toEqual(
      typed('R', be.i32(10), be.cstr('SCRAM-SHA-256'), be.u8(0)),
    );
    expect(encodeBackendMessages({ type: 'DataRow', values: [Buffer.from('ab'), null] })).toEqual(typed('D', be.i16(2), be.i32(2), be.str('ab'), be.i32(-1)));
    expect(encodeBackendMessages(pgError({ code: '28P01', message: 'nope', severity: 'FATAL' }))).toEqual(
      typed('E', be.str('S'), be.cstr('FATAL'), be.str('V'), be.cstr('FATAL'), be.str('C'), be.cstr('28P01'), be.str('M'), be.cstr('nope'), be.u8(0)),
    );
    expect(encodeBackendMessages({ type: 'RowDescription', fields: [{ name: 'a', tableOid: 1, columnAttr: 2, typeOid: 3, typeSize: -1, typeModifier: -1, format: 1 }] })).toEqual(
      typed('T', be.i16(1), be.cstr('a'), be.i32(1), be.i16(2), be.i32(3), be.i16(-1), be.i32(-1), be.i16(1)),
    );
    expect(encodeBackendMessages({ type: 'EncryptionResponse', code: 0x4e, accepted: false })).toEqual(Buffer.from('N'));
  });
});

describe('backend messages: decoding', () => {
  it.each(backendSamples.map((m, i) => [`${m.type} #${i}`, m] as const))('decodes %s whole, split at every byte and byte by byte', (_t, message) => {
    for (const { label, chunks } of chunkings(encodeBackendMessages(message))) {
      expect([label, decodeStream(chunks)]).toEqual([label, [message]]);
    }
  });

  it('decodes every message in one chunk, and split at every byte', () => {
    const bytes = encodeBackendMessages(...backendSamples);
    expect(decodeStream([bytes])).toEqual(backendSamples);
    // Re-encoding is a fast exact check for the hundreds of other feedings (toEqual on Buffers is slow).
    for (const { label, chunks } of chunkings(bytes)) {
      const decoded = decodeStream(chunks);
      if (!encodeBackendMessages(...decoded).equals(bytes)) expect([label, decoded]).toEqual([label, backendSamples]);
      expect(decoded).toHaveLength(backendSamples.length);
    }
  });

  it('hands out DataRow values as slices of the received chunk (zero-copy)', () => {
    const chunk = encodeBackendMessages({ type: 'DataRow', values: [Buffer.from('value')] });
    const [row] = decodeStream([chunk]);
    if (row.type !== 'DataRow') throw new Error('expected DataRow');
    expect(row.values[0]?.buffer).toBe(chunk.buffer);
  });

  it('reads the encryption answer when told to, then typed messages', () => {
    const decoder = new BackendDecoder();
    decoder.expectEncryptionResponse();
    const out = collect<BackendMessage>([Buffer.from('N'), encodeBackendMessages({ type: 'AuthenticationOk' })], (c, emit) => decoder.push(c, emit));
    expect(out).toEqual([{ type: 'EncryptionResponse', code: 0x4e, accepted: false }, { type: 'AuthenticationOk' }]);
  });

  it('round-trips any message through encode and a split stream (property)', () => {
    fc.assert(
      fc.property(fc.array(backendMessageArb, { minLength: 1, maxLength: 8 }), fc.nat(), (messages, cut) => {
        const bytes = encodeBackendMessages(...messages);
        const at = cut % (bytes.length + 1);
        expect(decodeStream([bytes.subarray(0, at), bytes.subarray(at)])).toEqual(messages);
      }),
      { numRuns: 400 },
    );
  });
});

describe('backend messages: malformed input', () => {
  it.each([
    ['unknown type byte', typed('!'), 'DBP_ERR_PG_UNKNOWN_MESSAGE'],
    ['Kerberos authentication', typed('R', be.i32(2)), 'DBP_ERR_PG_UNSUPPORTED_AUTH'],
    ['MD5 request with a short salt', typed('R', be.i32(5), be.u8(1)), 'DBP_ERR_PG_MALFORMED'],
    ['AuthenticationOk with trailing bytes', typed('R', be.i32(0), be.u8(0)), 'DBP_ERR_PG_MALFORMED'],
    ['ReadyForQuery with an unknown status', typed('Z', be.str('X')), 'DBP_ERR_PG_MALFORMED'],
    ['ErrorResponse without a SQLSTATE', typed('E', be.str('S'), be.cstr('ERROR'), be.str('M'), be.cstr('m'), be.u8(0)), 'DBP_ERR_PG_MALFORMED'],
    ['ErrorResponse without its terminator', typed('E', be.str('S'), be.cstr('ERROR')), 'DBP_ERR_PG_MALFORMED'],
    ['DataRow with more columns than bytes', typed('D', be.i16(3), be.i32(-1)), 'DBP_ERR_PG_MALFORMED'],
    ['NegotiateProtocolVersion with an impossible count', typed('v', be.i32(0), be.i32(1_000_000)), 'DBP_ERR_PG_MALFORMED'],
    ['CopyOutResponse with format 2', typed('H', be.u8(2), be.i16(0)), 'DBP_ERR_PG_MALFORMED'],
  ])('rejects %s', (_name, bytes, code) => {
    expect(thrownCode(() => decodeBackendMessage(frameOf(bytes)))).toBe(code);
  });

  it('ignores unknown ErrorResponse field types, as clients must', () => {
    const bytes = typed('E', be.str('S'), be.cstr('ERROR'), be.str('C'), be.cstr('XX000'), be.str('M'), be.cstr('m'), be.str('Y'), be.cstr('future'), be.u8(0));
    expect(decodeBackendMessage(frameOf(bytes))).toEqual({ type: 'ErrorResponse', severity: 'ERROR', code: 'XX000', message: 'm' });
  });

  it('refuses to encode what cannot be framed, leaving the writer clean', () => {
    const writer = new MessageWriter();
    writeBackendMessage(writer, { type: 'NoData' });
    expect(thrownCode(() => writeBackendMessage(writer, { type: 'AuthenticationMD5Password', salt: Buffer.alloc(3) }))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    expect(thrownCode(() => writeBackendMessage(writer, { type: 'ReadyForQuery', status: 'Q' as 'I' }))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    expect(thrownCode(() => writeBackendMessage(writer, { type: 'EncryptionResponse', code: 0x41, accepted: true }))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    expect(thrownCode(() => writeBackendMessage(writer, { type: 'AuthenticationSASL', mechanisms: [''] }))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    expect(thrownCode(() => writeBackendMessage(writer, { type: 'Bogus' } as unknown as BackendMessage))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    expect(writer.flush()).toEqual(typed('n'));
  });
});

describe('errors for clients', () => {
  it('builds ErrorResponses with both severities and a SQLSTATE', () => {
    expect(pgError({ code: SqlState.FeatureNotSupported, message: 'COPY needs transparent mode', hint: 'use port 6432' })).toEqual({
      type: 'ErrorResponse',
      severity: 'ERROR',
      severityNonLocalized: 'ERROR',
      code: '0A000',
      message: 'COPY needs transparent mode',
      hint: 'use port 6432',
    });
    expect(thrownCode(() => pgError({ code: 'nope', message: 'x' }))).toBe('DBP_ERR_PG_ENCODE_INVALID');
    expect(pgNotice({ code: '00000', message: 'hello' }).severity).toBe('NOTICE');
  });

  it("reports a wrong password the way PostgreSQL does", () => {
    expect(passwordAuthenticationFailed('alice')).toMatchObject({ severity: 'FATAL', code: '28P01', message: 'password authentication failed for user "alice"' });
  });

  it('maps codec errors to SQLSTATEs', () => {
    expect(sqlStateForError('DBP_ERR_PG_MESSAGE_TOO_LARGE')).toBe('54000');
    expect(sqlStateForError('DBP_ERR_PG_MALFORMED')).toBe('08P01');
    expect(sqlStateForError('DBP_ERR_PG_UNSUPPORTED_TYPE')).toBe('0A000');
    expect(sqlStateForError('SOMETHING_ELSE')).toBe('XX000');
    expect(sqlStateForError(undefined)).toBe('XX000');
  });
});
