// Column definitions (Protocol::ColumnDefinition41), as sent in result sets and prepare responses.
import { Buffer } from 'node:buffer';
import { Collation } from './charsets';
import { PacketReader, type PacketWriter } from './cursor';
import { MalformedPacket } from './errors';

export interface ColumnDefinition {
  readonly catalog: string;
  readonly schema: string;
  readonly table: string;
  readonly orgTable: string;
  readonly name: string;
  readonly orgName: string;
  /** Collation id (63 = binary). */
  readonly characterSet: number;
  readonly columnLength: number;
  /** A ColumnType byte. */
  readonly type: number;
  /** ColumnFlag bits. */
  readonly flags: number;
  readonly decimals: number;
  /** MariaDB extended type info (with MARIADB_CLIENT_EXTENDED_METADATA), raw. */
  readonly extendedMetadata: Buffer | null;
  /** Default value (COM_FIELD_LIST responses only). */
  readonly defaultValue: Buffer | null;
}

export interface ColumnDecodeOptions {
  /** MARIADB_CLIENT_EXTENDED_METADATA was negotiated: an extra length-encoded field follows org_name. */
  readonly mariaDbExtendedMetadata?: boolean;
}

const FIXED_FIELDS_LENGTH = 0x0c;

export function decodeColumnDefinition(payload: Buffer, options: ColumnDecodeOptions = {}): ColumnDefinition {
  const r = new PacketReader(payload);
  const catalog = r.lenencString('catalog');
  const schema = r.lenencString('schema');
  const table = r.lenencString('table');
  const orgTable = r.lenencString('org_table');
  const name = r.lenencString('name');
  const orgName = r.lenencString('org_name');
  const extendedMetadata = options.mariaDbExtendedMetadata ? r.lenencBytes('extended metadata') : null;
  const fixed = r.lenenc('fixed fields length');
  if (fixed < FIXED_FIELDS_LENGTH) throw MalformedPacket(`column definition fixed part of ${fixed} bytes`);
  const characterSet = r.u16('character set');
  const columnLength = r.u32('column length');
  const type = r.u8('column type');
  const flags = r.u16('column flags');
  const decimals = r.u8('decimals');
  r.skip(fixed - 10, 'column definition filler');
  const defaultValue = r.atEnd() ? null : r.lenencBytesOrNull('default value');
  return { catalog, schema, table, orgTable, name, orgName, characterSet, columnLength, type, flags, decimals, extendedMetadata, defaultValue };
}

/** A column definition with defaults for the parts a synthesized result usually leaves out. */
export function columnDefinition(
  fields: Pick<ColumnDefinition, 'name' | 'type'> & Partial<Omit<ColumnDefinition, 'name' | 'type'>>,
): ColumnDefinition {
  return {
    catalog: 'def',
    schema: '',
    table: '',
    orgTable: '',
    orgName: fields.name,
    characterSet: Collation.utf8mb4_general_ci,
    columnLength: 0,
    flags: 0,
    decimals: 0,
    extendedMetadata: null,
    defaultValue: null,
    ...fields,
  };
}

/** Writes one column definition packet; returns the next sequence id. */
export function encodeColumnDefinition(w: PacketWriter, sequenceId: number, col: ColumnDefinition, options: ColumnDecodeOptions = {}): number {
  w.begin(sequenceId);
  w.lenencString(col.catalog).lenencString(col.schema).lenencString(col.table).lenencString(col.orgTable);
  w.lenencString(col.name).lenencString(col.orgName);
  if (options.mariaDbExtendedMetadata) w.lenencBytes(col.extendedMetadata ?? Buffer.alloc(0));
  w.lenenc(FIXED_FIELDS_LENGTH).u16(col.characterSet).u32(col.columnLength).u8(col.type).u16(col.flags).u8(col.decimals).u16(0);
  if (col.defaultValue) w.lenencBytes(col.defaultValue);
  return w.end();
}
