// Result metadata and rows: RowDescription, DataRow, ParameterDescription.
import { BackendCode } from '../codes';
import { MessageReader, MessageWriter } from '../cursor';
import type { DataRow, FieldDescription, ParameterDescription, RowDescription } from './messages';

export function decodeRowDescription(reader: MessageReader): RowDescription {
  return { type: 'RowDescription', fields: reader.list(() => decodeField(reader)) };
}

function decodeField(reader: MessageReader): FieldDescription {
  return {
    name: reader.cstring(),
    tableOid: reader.u32(),
    columnAttr: reader.i16(),
    typeOid: reader.u32(),
    typeSize: reader.i16(),
    typeModifier: reader.i32(),
    format: reader.i16(),
  };
}

export function writeRowDescription(w: MessageWriter, m: RowDescription): void {
  w.begin(BackendCode.RowDescription);
  w.list(m.fields, (f) =>
    w.cstring(f.name).u32(f.tableOid).i16(f.columnAttr).u32(f.typeOid).i16(f.typeSize).i32(f.typeModifier).i16(f.format),
  );
  w.end();
}

export function decodeDataRow(reader: MessageReader): DataRow {
  return { type: 'DataRow', values: reader.list(() => reader.nullableBytes()) };
}

export function writeDataRow(w: MessageWriter, m: DataRow): void {
  w.begin(BackendCode.DataRow);
  w.list(m.values, (v) => w.nullableBytes(v));
  w.end();
}

export function decodeParameterDescription(reader: MessageReader): ParameterDescription {
  return { type: 'ParameterDescription', typeOids: reader.list(() => reader.u32()) };
}

export function writeParameterDescription(w: MessageWriter, m: ParameterDescription): void {
  w.begin(BackendCode.ParameterDescription);
  w.list(m.typeOids, (oid) => w.u32(oid));
  w.end();
}
