// OIDs of the PostgreSQL built-in types the terminating path carries (pg_type.oid, stable across versions).

export const PgTypeOid = {
  bool: 16, // boolean
  bytea: 17, // bytea
  char: 18, // "char" (single byte)
  name: 19, // name
  int8: 20, // bigint
  int2: 21, // smallint
  int4: 23, // integer
  text: 25, // text
  oid: 26, // oid
  json: 114, // json
  float4: 700, // real
  float8: 701, // double precision
  bpchar: 1042, // character(n)
  varchar: 1043, // character varying(n)
  date: 1082, // date
  time: 1083, // time without time zone
  timestamp: 1114, // timestamp without time zone
  timestamptz: 1184, // timestamp with time zone
  numeric: 1700, // numeric
  jsonb: 3802, // jsonb
} as const;
export type PgTypeName = keyof typeof PgTypeOid;
export type PgTypeOid = (typeof PgTypeOid)[PgTypeName];
