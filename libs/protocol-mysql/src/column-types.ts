// Column/parameter type bytes and column flags, and the value shapes the codec decodes them to.

/** The type byte of column definitions and binary parameters. */
export const ColumnType = {
  Decimal: 0x00, // MYSQL_TYPE_DECIMAL
  Tiny: 0x01, // MYSQL_TYPE_TINY
  Short: 0x02, // MYSQL_TYPE_SHORT
  Long: 0x03, // MYSQL_TYPE_LONG
  Float: 0x04, // MYSQL_TYPE_FLOAT
  Double: 0x05, // MYSQL_TYPE_DOUBLE
  Null: 0x06, // MYSQL_TYPE_NULL
  Timestamp: 0x07, // MYSQL_TYPE_TIMESTAMP
  LongLong: 0x08, // MYSQL_TYPE_LONGLONG
  Int24: 0x09, // MYSQL_TYPE_INT24
  Date: 0x0a, // MYSQL_TYPE_DATE
  Time: 0x0b, // MYSQL_TYPE_TIME
  DateTime: 0x0c, // MYSQL_TYPE_DATETIME
  Year: 0x0d, // MYSQL_TYPE_YEAR
  NewDate: 0x0e, // MYSQL_TYPE_NEWDATE (internal)
  VarChar: 0x0f, // MYSQL_TYPE_VARCHAR
  Bit: 0x10, // MYSQL_TYPE_BIT
  Timestamp2: 0x11, // MYSQL_TYPE_TIMESTAMP2 (internal)
  DateTime2: 0x12, // MYSQL_TYPE_DATETIME2 (internal)
  Time2: 0x13, // MYSQL_TYPE_TIME2 (internal)
  Vector: 0xf2, // MYSQL_TYPE_VECTOR (MySQL 9)
  Json: 0xf5, // MYSQL_TYPE_JSON
  NewDecimal: 0xf6, // MYSQL_TYPE_NEWDECIMAL
  Enum: 0xf7, // MYSQL_TYPE_ENUM
  Set: 0xf8, // MYSQL_TYPE_SET
  TinyBlob: 0xf9, // MYSQL_TYPE_TINY_BLOB
  MediumBlob: 0xfa, // MYSQL_TYPE_MEDIUM_BLOB
  LongBlob: 0xfb, // MYSQL_TYPE_LONG_BLOB
  Blob: 0xfc, // MYSQL_TYPE_BLOB
  VarString: 0xfd, // MYSQL_TYPE_VAR_STRING
  String: 0xfe, // MYSQL_TYPE_STRING
  Geometry: 0xff, // MYSQL_TYPE_GEOMETRY
} as const;

/** Column definition flags. */
export const ColumnFlag = {
  NotNull: 0x0001, // NOT_NULL_FLAG
  PrimaryKey: 0x0002, // PRI_KEY_FLAG
  UniqueKey: 0x0004, // UNIQUE_KEY_FLAG
  MultipleKey: 0x0008, // MULTIPLE_KEY_FLAG
  Blob: 0x0010, // BLOB_FLAG
  Unsigned: 0x0020, // UNSIGNED_FLAG
  Zerofill: 0x0040, // ZEROFILL_FLAG
  Binary: 0x0080, // BINARY_FLAG
  Enum: 0x0100, // ENUM_FLAG
  AutoIncrement: 0x0200, // AUTO_INCREMENT_FLAG
  Timestamp: 0x0400, // TIMESTAMP_FLAG
  Set: 0x0800, // SET_FLAG
  NoDefaultValue: 0x1000, // NO_DEFAULT_VALUE_FLAG
  OnUpdateNow: 0x2000, // ON_UPDATE_NOW_FLAG
  Num: 0x8000, // NUM_FLAG
} as const;

/** The high bit of a binary parameter's flag byte marks an unsigned integer. */
export const PARAM_UNSIGNED = 0x80;

/** DATE / NEWDATE. */
export interface MysqlDate {
  readonly kind: 'date';
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/** DATETIME / TIMESTAMP. */
export interface MysqlDateTime {
  readonly kind: 'datetime';
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly microsecond: number;
}

/** TIME: a signed duration, days + hours:minutes:seconds.micro. */
export interface MysqlTime {
  readonly kind: 'time';
  readonly negative: boolean;
  readonly days: number;
  readonly hours: number;
  readonly minutes: number;
  readonly seconds: number;
  readonly microseconds: number;
}

/**
 * A decoded value: 64-bit integers are bigint, other integers and floats number, DECIMAL and
 * text string, BLOB/BIT/GEOMETRY and binary-collation strings Buffer, temporals tagged structs.
 */
export type MysqlValue = null | number | bigint | string | Buffer | MysqlDate | MysqlDateTime | MysqlTime;

/** Types whose binary encoding is a length-encoded byte string. */
export function isLengthEncodedType(type: number): boolean {
  switch (type) {
    case ColumnType.Decimal:
    case ColumnType.NewDecimal:
    case ColumnType.VarChar:
    case ColumnType.Bit:
    case ColumnType.Vector:
    case ColumnType.Json:
    case ColumnType.Enum:
    case ColumnType.Set:
    case ColumnType.TinyBlob:
    case ColumnType.MediumBlob:
    case ColumnType.LongBlob:
    case ColumnType.Blob:
    case ColumnType.VarString:
    case ColumnType.String:
    case ColumnType.Geometry:
      return true;
    default:
      return false;
  }
}

/** Types whose values are always bytes (never text), whatever the collation. */
export function isAlwaysBinaryType(type: number): boolean {
  return type === ColumnType.Bit || type === ColumnType.Geometry || type === ColumnType.Vector;
}

/**
 * Types a COM_STMT_EXECUTE parameter may carry. INT24, YEAR, BIT and GEOMETRY are valid in
 * binary rows but not as parameters: no client library binds them, and servers disagree on their
 * layout (MariaDB 10.11 binds NULL and reads no bytes, shifting every later value; MySQL reads a
 * length-encoded string), so a proxy could not know what the backend will see. MariaDB also
 * refuses JSON and the internal *2/NEWDATE/VECTOR types; JSON stays accepted for MySQL clients.
 */
export function isParameterType(type: number): boolean {
  switch (type) {
    case ColumnType.Int24:
    case ColumnType.Year:
    case ColumnType.Bit:
    case ColumnType.Geometry:
    case ColumnType.NewDate:
    case ColumnType.Timestamp2:
    case ColumnType.DateTime2:
    case ColumnType.Time2:
    case ColumnType.Vector:
      return false;
    default:
      return type <= ColumnType.Time2 || type >= ColumnType.Json;
  }
}

/** BLOB family: bytes as parameters; text when a result column has a text collation. */
export function isBlobType(type: number): boolean {
  return type >= ColumnType.TinyBlob && type <= ColumnType.Blob;
}
