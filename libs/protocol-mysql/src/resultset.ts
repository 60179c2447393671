// Result sets: the column-count packet, text rows and binary rows, decoded or only sliced.
import { Buffer } from 'node:buffer';
import { Capability, hasFlag } from './capabilities';
import { BINARY_COLLATION, encodingForCollation } from './charsets';
import { readBinaryValue, writeBinaryValue } from './binary-values';
import { encodeColumnDefinition, type ColumnDecodeOptions, type ColumnDefinition } from './column';
import { ColumnFlag, type MysqlValue } from './column-types';
import { PacketReader, type PacketWriter } from './cursor';
import { MalformedPacket } from './errors';
import { encodeEof, encodeResultSetEnd } from './packets/eof';
import type { OkFields } from './packets/ok';
import { formatTextValue, parseTextValue } from './text-values';

const BINARY_ROW_HEADER = 0x00;
/** Larger than any server allows (MySQL caps a table at 4096 columns); bounds what a column count can claim. */
export const MAX_COLUMNS = 0xffff;

export interface ColumnCount {
  readonly columnCount: number;
  /** False only with MariaDB metadata caching when the server skips the column definitions. */
  readonly metadataFollows: boolean;
}

/**
 * Decodes the first packet of a result set. With MARIADB_CLIENT_CACHE_METADATA (or MySQL's
 * CLIENT_OPTIONAL_RESULTSET_METADATA) a byte after the count says whether definitions follow.
 */
export function decodeColumnCount(payload: Buffer, withMetadataFlag = false): ColumnCount {
  const r = new PacketReader(payload);
  const columnCount = r.lenenc('column count');
  if (columnCount === 0 || columnCount > MAX_COLUMNS) throw MalformedPacket(`column count of ${columnCount}`);
  const metadataFollows = withMetadataFlag && !r.atEnd() ? r.u8('metadata follows') !== 0 : true;
  return { columnCount, metadataFollows };
}

export function encodeColumnCount(w: PacketWriter, sequenceId: number, columnCount: number): number {
  w.begin(sequenceId).lenenc(columnCount);
  return w.end();
}

/** The cells of a text row as slices of the payload (null for SQL NULL); nothing is copied or decoded. */
export function textRowCells(payload: Buffer, columnCount: number): (Buffer | null)[] {
  const r = new PacketReader(payload);
  const cells: (Buffer | null)[] = [];
  for (let i = 0; i < columnCount; i++) cells.push(r.lenencBytesOrNull('text cell'));
  if (!r.atEnd()) throw MalformedPacket(`text row has ${r.remaining} bytes after ${columnCount} cells`);
  return cells;
}

function isBinaryColumn(col: ColumnDefinition): boolean {
  return col.characterSet === BINARY_COLLATION;
}

/** Decodes a text row into typed values following the column definitions. */
export function decodeTextRow(payload: Buffer, columns: readonly ColumnDefinition[]): MysqlValue[] {
  const cells = textRowCells(payload, columns.length);
  return cells.map((cell, i) => {
    if (cell === null) return null;
    const col = columns[i];
    return parseTextValue(cell, { type: col.type, binary: isBinaryColumn(col), encoding: encodingForCollation(col.characterSet) });
  });
}

/** Writes a text row; values are formatted as the server would. Returns the next sequence id. */
export function encodeTextRow(w: PacketWriter, sequenceId: number, values: readonly MysqlValue[]): number {
  return w.framed(sequenceId, () => {
    for (const value of values) {
      if (value === null) {
        w.lenencNull();
        continue;
      }
      const text = formatTextValue(value);
      if (typeof text === 'string') w.lenencString(text);
      else w.lenencBytes(text);
    }
  });
}

/** Decodes a binary row (0x00, NULL bitmap with a 2-bit offset, values). */
export function decodeBinaryRow(payload: Buffer, columns: readonly ColumnDefinition[]): MysqlValue[] {
  const r = new PacketReader(payload);
  if (r.u8('binary row header') !== BINARY_ROW_HEADER) throw MalformedPacket('binary row does not start with 0x00');
  const bitmap = r.bytes((columns.length + 7 + 2) >> 3, 'NULL bitmap');
  const values: MysqlValue[] = new Array<MysqlValue>(columns.length);
  for (let i = 0; i < columns.length; i++) {
    const bit = i + 2;
    if ((bitmap[bit >> 3] & (1 << (bit & 7))) !== 0) {
      values[i] = null;
      continue;
    }
    const col = columns[i];
    values[i] = readBinaryValue(r, {
      type: col.type,
      unsigned: (col.flags & ColumnFlag.Unsigned) !== 0,
      binary: isBinaryColumn(col),
      encoding: encodingForCollation(col.characterSet),
    });
  }
  if (!r.atEnd()) throw MalformedPacket(`binary row has ${r.remaining} bytes after ${columns.length} values`);
  return values;
}

/** Writes a binary row for the given columns. Returns the next sequence id. */
export function encodeBinaryRow(w: PacketWriter, sequenceId: number, columns: readonly ColumnDefinition[], values: readonly MysqlValue[]): number {
  if (values.length !== columns.length) throw MalformedPacket(`${values.length} values for ${columns.length} columns`);
  const bitmap = Buffer.alloc((columns.length + 7 + 2) >> 3);
  values.forEach((v, i) => {
    if (v === null) bitmap[(i + 2) >> 3] |= 1 << ((i + 2) & 7);
  });
  return w.framed(sequenceId, () => {
    w.u8(BINARY_ROW_HEADER).bytes(bitmap);
    values.forEach((v, i) => {
      if (v !== null) writeBinaryValue(w, columns[i].type, (columns[i].flags & ColumnFlag.Unsigned) !== 0, v);
    });
  });
}

export interface ResultSetFields {
  readonly columns: readonly ColumnDefinition[];
  readonly rows: readonly (readonly MysqlValue[])[];
  /** Binary rows (COM_STMT_EXECUTE) instead of text rows (COM_QUERY). */
  readonly binary?: boolean;
  /** Status flags and warnings of the terminator (add MoreResultsExists for a multi-result). */
  readonly end?: OkFields;
}

/**
 * Writes a whole result set: column count, definitions, EOF (unless CLIENT_DEPRECATE_EOF),
 * rows and the terminator. Returns the next sequence id. On a value that cannot be encoded,
 * nothing of the result set stays in the writer.
 */
export function encodeResultSet(w: PacketWriter, sequenceId: number, rs: ResultSetFields, capabilities: number, options: ColumnDecodeOptions = {}): number {
  const start = w.length;
  try {
    return writeResultSet(w, sequenceId, rs, capabilities, options);
  } catch (err) {
    w.truncate(start); // no half result set left in the writer
    throw err;
  }
}

function writeResultSet(w: PacketWriter, sequenceId: number, rs: ResultSetFields, capabilities: number, options: ColumnDecodeOptions): number {
  let seq = encodeColumnCount(w, sequenceId, rs.columns.length);
  for (const col of rs.columns) seq = encodeColumnDefinition(w, seq, col, options);
  if (!hasFlag(capabilities, Capability.DeprecateEof)) seq = encodeEof(w, seq, { statusFlags: rs.end?.statusFlags }, capabilities);
  for (const row of rs.rows) seq = rs.binary ? encodeBinaryRow(w, seq, rs.columns, row) : encodeTextRow(w, seq, row);
  return encodeResultSetEnd(w, seq, rs.end ?? {}, capabilities);
}
