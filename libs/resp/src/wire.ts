// RESP wire bytes: the type marker that opens each frame and the ASCII delimiters around it.

/** The first byte of every RESP2/RESP3 frame, named by the type it opens. */
export const RespType = {
  SimpleString: 0x2b, // '+'
  Error: 0x2d, // '-'
  Integer: 0x3a, // ':'
  Bulk: 0x24, // '$'
  Array: 0x2a, // '*'
  Null: 0x5f, // '_'  RESP3
  Boolean: 0x23, // '#'  RESP3
  Double: 0x2c, // ','  RESP3
  BigNumber: 0x28, // '('  RESP3
  BulkError: 0x21, // '!'  RESP3
  Verbatim: 0x3d, // '='  RESP3
  Map: 0x25, // '%'  RESP3
  Set: 0x7e, // '~'  RESP3
  Attribute: 0x7c, // '|'  RESP3
  Push: 0x3e, // '>'  RESP3
} as const;
export type RespTypeByte = (typeof RespType)[keyof typeof RespType];

/** ASCII bytes the scanners look at. */
export const Ascii = {
  Nul: 0x00, // '\0'
  Tab: 0x09, // '\t'
  LF: 0x0a, // '\n'
  VT: 0x0b, // '\v'
  FF: 0x0c, // '\f'
  CR: 0x0d, // '\r'
  Space: 0x20, // ' '
  DoubleQuote: 0x22, // '"'
  SingleQuote: 0x27, // '\''
  Plus: 0x2b, // '+'
  Minus: 0x2d, // '-'
  Dot: 0x2e, // '.'
  Zero: 0x30, // '0'
  One: 0x31, // '1'
  Nine: 0x39, // '9'
  Colon: 0x3a, // ':'
  Backslash: 0x5c, // '\\'
  LowerF: 0x66, // 'f'
  LowerT: 0x74, // 't'
} as const;

/** Bits of a scanned reply's `flags`. */
export const ReplyFlag = {
  Error: 1, // '-' or '!' at the top level
  Push: 2, // '>' at the top level (out-of-band)
  Attribute: 4, // one or more '|' attributes precede the top-level value
  Null: 8, // '$-1', '*-1' or '_' at the top level
} as const;

/** Bits of a scanned command's `flags`. */
export const CommandFlag = {
  Inline: 1, // sent as an inline (space separated) line, not a multibulk array
  Decoded: 2, // inline arguments were unquoted/unescaped into a separate buffer
} as const;
