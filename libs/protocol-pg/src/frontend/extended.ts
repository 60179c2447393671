// Extended-query messages: Parse, Bind, Describe, Execute, Close (Sync and Flush have no body).
import { FrontendCode, TargetKind } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import type { Bind, Close, Describe, Execute, Parse } from './messages';

export function decodeParse(reader: MessageReader): Parse {
  const statement = reader.cstring();
  const sql = reader.cstring();
  const paramTypes = reader.list(() => reader.u32());
  return { type: 'Parse', statement, sql, paramTypes };
}

export function writeParse(w: MessageWriter, m: Parse): void {
  w.begin(FrontendCode.Parse).cstring(m.statement).cstring(m.sql).u16(m.paramTypes.length);
  for (const oid of m.paramTypes) w.u32(oid);
  w.end();
}

export function decodeBind(reader: MessageReader): Bind {
  const portal = reader.cstring();
  const statement = reader.cstring();
  const paramFormats = reader.list(() => reader.i16());
  const params = reader.list(() => reader.nullableBytes());
  if (paramFormats.length > 1 && paramFormats.length !== params.length) {
    reader.fail(`${paramFormats.length} parameter formats for ${params.length} parameters`);
  }
  const resultFormats = reader.list(() => reader.i16());
  return { type: 'Bind', portal, statement, paramFormats, params, resultFormats };
}

export function writeBind(w: MessageWriter, m: Bind): void {
  w.begin(FrontendCode.Bind).cstring(m.portal).cstring(m.statement);
  w.list(m.paramFormats, (f) => w.i16(f));
  w.list(m.params, (p) => w.nullableBytes(p));
  w.list(m.resultFormats, (f) => w.i16(f));
  w.end();
}

export function decodeTarget(reader: MessageReader): { kind: TargetKind; name: string } {
  const byte = reader.u8();
  if (byte !== 0x53 && byte !== 0x50) reader.fail(`target must be 'S' or 'P', got 0x${byte.toString(16)}`);
  const kind = byte === 0x53 ? TargetKind.Statement : TargetKind.Portal;
  return { kind, name: reader.cstring() };
}

export function writeTarget(w: MessageWriter, code: number, m: Describe | Close): void {
  w.begin(code).u8(m.kind.charCodeAt(0)).cstring(m.name).end();
}

export function decodeExecute(reader: MessageReader): Execute {
  return { type: 'Execute', portal: reader.cstring(), maxRows: reader.i32() };
}

export function writeExecute(w: MessageWriter, m: Execute): void {
  w.begin(FrontendCode.Execute).cstring(m.portal).i32(m.maxRows).end();
}
