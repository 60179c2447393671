// Test support: fast-check arbitraries producing every message with wire-legal random contents.
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import type { BackendMessage, NoticeFields } from '../backend/messages';
import type { StartupMessage } from '../frontend/messages';
import type { TypedSample } from './samples';

export const cstringArb = fc.string({ unit: 'binary', maxLength: 24 }).filter((s) => !s.includes('\0'));
const nonEmptyCstring = cstringArb.filter((s) => s !== '');
export const bytesArb = fc.uint8Array({ maxLength: 48 }).map((a) => Buffer.from(a));
const nullableBytes = fc.option(bytesArb, { nil: null });
const i16 = fc.integer({ min: -0x8000, max: 0x7fff });
const i32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const format = fc.constantFrom(0, 1);
const kind = fc.constantFrom('S' as const, 'P' as const);

/** Values and a format list that obeys Bind's rule (none, one, or one per value). */
const valuesWithFormats = fc.array(nullableBytes, { maxLength: 6 }).chain((values) =>
  fc.tuple(fc.constant(values), fc.oneof(fc.constant([]), fc.array(i16, { minLength: 1, maxLength: 1 }), fc.array(i16, { minLength: values.length, maxLength: values.length }))),
);

export const startupMessageArb: fc.Arbitrary<StartupMessage> = fc
  .tuple(fc.integer({ min: 0, max: 0xffff }), fc.uniqueArray(fc.tuple(nonEmptyCstring, cstringArb), { maxLength: 6, selector: ([k]) => k }))
  .map(([minor, pairs]) => ({ type: 'StartupMessage', protocolVersion: 0x30000 + minor, parameters: new Map(pairs) }));

export const frontendMessageArb: fc.Arbitrary<TypedSample> = fc.oneof(
  cstringArb.map((sql) => ({ message: { type: 'Query', sql } })),
  fc.record({ statement: cstringArb, sql: cstringArb, paramTypes: fc.array(u32, { maxLength: 5 }) }).map((m) => ({ message: { type: 'Parse', ...m } })),
  fc.tuple(cstringArb, cstringArb, valuesWithFormats, fc.array(i16, { maxLength: 4 })).map(([portal, statement, [params, paramFormats], resultFormats]) => ({
    message: { type: 'Bind', portal, statement, params, paramFormats, resultFormats },
  })),
  fc.record({ kind, name: cstringArb }).map((m) => ({ message: { type: 'Describe', ...m } })),
  fc.record({ kind, name: cstringArb }).map((m) => ({ message: { type: 'Close', ...m } })),
  fc.record({ portal: cstringArb, maxRows: i32 }).map((m) => ({ message: { type: 'Execute', ...m } })),
  fc.constantFrom('Sync' as const, 'Flush' as const, 'Terminate' as const, 'CopyDone' as const).map((type) => ({ message: { type } })),
  bytesArb.map((data) => ({ message: { type: 'CopyData', data } })),
  cstringArb.map((message) => ({ message: { type: 'CopyFail', message } })),
  fc.tuple(u32, valuesWithFormats, i16).map(([functionOid, [args, argFormats], resultFormat]) => ({
    message: { type: 'FunctionCall', functionOid, args, argFormats, resultFormat },
  })),
  cstringArb.map((password) => ({ message: { type: 'PasswordMessage', password }, auth: 'password' })),
  fc.record({ mechanism: cstringArb, data: nullableBytes }).map((m) => ({ message: { type: 'SASLInitialResponse', ...m }, auth: 'sasl-initial' })),
  bytesArb.map((data) => ({ message: { type: 'SASLResponse', data }, auth: 'sasl' })),
) as fc.Arbitrary<TypedSample>;

const noticeFieldsArb: fc.Arbitrary<NoticeFields> = fc.record(
  {
    severity: cstringArb,
    severityNonLocalized: cstringArb,
    code: cstringArb,
    message: cstringArb,
    detail: cstringArb,
    hint: cstringArb,
    position: cstringArb,
    where: cstringArb,
    table: cstringArb,
    routine: cstringArb,
  },
  { requiredKeys: ['severity', 'code', 'message'] },
);

const fieldArb = fc.record({
  name: cstringArb,
  tableOid: u32,
  columnAttr: i16,
  typeOid: u32,
  typeSize: i16,
  typeModifier: i32,
  format: i16,
});

export const backendMessageArb: fc.Arbitrary<BackendMessage> = fc.oneof(
  fc.constantFrom(
    'AuthenticationOk' as const,
    'AuthenticationCleartextPassword' as const,
    'ParseComplete' as const,
    'BindComplete' as const,
    'CloseComplete' as const,
    'NoData' as const,
    'PortalSuspended' as const,
    'EmptyQueryResponse' as const,
    'CopyDone' as const,
  ).map((type) => ({ type })),
  fc.uint8Array({ minLength: 4, maxLength: 4 }).map((salt) => ({ type: 'AuthenticationMD5Password', salt: Buffer.from(salt) })),
  fc.array(nonEmptyCstring, { maxLength: 4 }).map((mechanisms) => ({ type: 'AuthenticationSASL', mechanisms })),
  bytesArb.map((data) => ({ type: 'AuthenticationSASLContinue', data })),
  bytesArb.map((data) => ({ type: 'AuthenticationSASLFinal', data })),
  fc.record({ processId: i32, secretKey: i32 }).map((m) => ({ type: 'BackendKeyData', ...m })),
  cstringArb.map((tag) => ({ type: 'CommandComplete', tag })),
  fc.record({ type: fc.constantFrom('CopyInResponse' as const, 'CopyOutResponse' as const, 'CopyBothResponse' as const), format, columnFormats: fc.array(i16, { maxLength: 5 }) }),
  bytesArb.map((data) => ({ type: 'CopyData', data })),
  fc.array(nullableBytes, { maxLength: 8 }).map((values) => ({ type: 'DataRow', values })),
  noticeFieldsArb.map((f) => ({ type: 'ErrorResponse', ...f })),
  noticeFieldsArb.map((f) => ({ type: 'NoticeResponse', ...f })),
  nullableBytes.map((result) => ({ type: 'FunctionCallResponse', result })),
  fc.record({ newestMinorVersion: i32, unrecognizedOptions: fc.array(cstringArb, { maxLength: 3 }) }).map((m) => ({ type: 'NegotiateProtocolVersion', ...m })),
  fc.record({ processId: i32, channel: cstringArb, payload: cstringArb }).map((m) => ({ type: 'NotificationResponse', ...m })),
  fc.array(u32, { maxLength: 6 }).map((typeOids) => ({ type: 'ParameterDescription', typeOids })),
  fc.record({ name: cstringArb, value: cstringArb }).map((m) => ({ type: 'ParameterStatus', ...m })),
  fc.constantFrom('I' as const, 'T' as const, 'E' as const).map((status) => ({ type: 'ReadyForQuery', status })),
  fc.array(fieldArb, { maxLength: 4 }).map((fields) => ({ type: 'RowDescription', fields })),
) as fc.Arbitrary<BackendMessage>;
