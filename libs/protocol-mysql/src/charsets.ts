// Collation ids used on the wire (handshake and column definitions) and the JS encodings they map to.

/** Common collation ids; the handshake carries the low byte, column definitions two bytes. */
export const Collation = {
  big5_chinese_ci: 1,
  latin1_german1_ci: 5,
  latin1_swedish_ci: 8,
  ascii_general_ci: 11,
  ucs2_general_ci: 35,
  utf8mb3_general_ci: 33,
  utf8mb4_general_ci: 45,
  utf8mb4_bin: 46,
  latin1_bin: 47,
  latin1_general_ci: 48,
  latin1_general_cs: 49,
  utf16_general_ci: 54,
  utf16le_general_ci: 56,
  binary: 63,
  ascii_bin: 65,
  utf8mb3_bin: 83,
  utf8mb3_unicode_ci: 192,
  utf8mb4_unicode_ci: 224,
  utf8mb4_unicode_520_ci: 246,
  utf8mb4_0900_ai_ci: 255,
  utf8mb4_uca1400_ai_ci: 2304, // MariaDB 11.x server default
} as const;

/** The collation id meaning "binary data, no character set". */
export const BINARY_COLLATION = Collation.binary;

const LATIN1_IDS = new Set<number>([5, 8, 15, 31, 47, 48, 49, 94]);
const ASCII_IDS = new Set<number>([11, 65]);
const UTF16LE_IDS = new Set<number>([56, 62]);

/**
 * The Buffer encoding for text in a collation. utf8mb3/utf8mb4 and anything unknown decode as
 * UTF-8 (the only charset modern clients and dbproxy's configuration use); binary gives latin1
 * so that bytes round-trip one to one.
 */
export function encodingForCollation(collation: number): BufferEncoding {
  if (LATIN1_IDS.has(collation) || collation === BINARY_COLLATION) return 'latin1';
  if (ASCII_IDS.has(collation)) return 'ascii';
  if (UTF16LE_IDS.has(collation)) return 'utf16le';
  return 'utf8';
}
