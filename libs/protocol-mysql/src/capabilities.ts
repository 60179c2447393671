// Capability flags, MariaDB extended capabilities and server status flags, as on the wire.

/** Client/server capability flags (the 4-byte field of the handshake packets). */
export const Capability = {
  LongPassword: 0x00000001, // CLIENT_LONG_PASSWORD; MariaDB reads it as CLIENT_MYSQL
  FoundRows: 0x00000002, // CLIENT_FOUND_ROWS
  LongFlag: 0x00000004, // CLIENT_LONG_FLAG
  ConnectWithDb: 0x00000008, // CLIENT_CONNECT_WITH_DB
  NoSchema: 0x00000010, // CLIENT_NO_SCHEMA
  Compress: 0x00000020, // CLIENT_COMPRESS
  Odbc: 0x00000040, // CLIENT_ODBC
  LocalFiles: 0x00000080, // CLIENT_LOCAL_FILES
  IgnoreSpace: 0x00000100, // CLIENT_IGNORE_SPACE
  Protocol41: 0x00000200, // CLIENT_PROTOCOL_41
  Interactive: 0x00000400, // CLIENT_INTERACTIVE
  Ssl: 0x00000800, // CLIENT_SSL
  IgnoreSigpipe: 0x00001000, // CLIENT_IGNORE_SIGPIPE
  Transactions: 0x00002000, // CLIENT_TRANSACTIONS
  Reserved: 0x00004000, // CLIENT_RESERVED
  SecureConnection: 0x00008000, // CLIENT_SECURE_CONNECTION (RESERVED2)
  MultiStatements: 0x00010000, // CLIENT_MULTI_STATEMENTS
  MultiResults: 0x00020000, // CLIENT_MULTI_RESULTS
  PsMultiResults: 0x00040000, // CLIENT_PS_MULTI_RESULTS
  PluginAuth: 0x00080000, // CLIENT_PLUGIN_AUTH
  ConnectAttrs: 0x00100000, // CLIENT_CONNECT_ATTRS
  PluginAuthLenencClientData: 0x00200000, // CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
  CanHandleExpiredPasswords: 0x00400000, // CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS
  SessionTrack: 0x00800000, // CLIENT_SESSION_TRACK
  DeprecateEof: 0x01000000, // CLIENT_DEPRECATE_EOF
  OptionalResultsetMetadata: 0x02000000, // CLIENT_OPTIONAL_RESULTSET_METADATA
  ZstdCompression: 0x04000000, // CLIENT_ZSTD_COMPRESSION_ALGORITHM
  QueryAttributes: 0x08000000, // CLIENT_QUERY_ATTRIBUTES
  MultiFactorAuthentication: 0x10000000, // MULTI_FACTOR_AUTHENTICATION
  CapabilityExtension: 0x20000000, // CLIENT_CAPABILITY_EXTENSION
  SslVerifyServerCert: 0x40000000, // CLIENT_SSL_VERIFY_SERVER_CERT
  RememberOptions: 0x80000000, // CLIENT_REMEMBER_OPTIONS
} as const;

/** MariaDB extended capabilities: 4 bytes carried in the handshake filler when CLIENT_MYSQL is unset. */
export const MariaDbCapability = {
  Progress: 0x00000001, // MARIADB_CLIENT_PROGRESS
  ComMulti: 0x00000002, // MARIADB_CLIENT_COM_MULTI
  StmtBulkOperations: 0x00000004, // MARIADB_CLIENT_STMT_BULK_OPERATIONS
  ExtendedMetadata: 0x00000008, // MARIADB_CLIENT_EXTENDED_METADATA
  CacheMetadata: 0x00000010, // MARIADB_CLIENT_CACHE_METADATA
  BulkUnitResults: 0x00000020, // MARIADB_CLIENT_BULK_UNIT_RESULTS
} as const;

/** Server status flags carried by OK and EOF packets. */
export const ServerStatus = {
  InTrans: 0x0001, // SERVER_STATUS_IN_TRANS
  Autocommit: 0x0002, // SERVER_STATUS_AUTOCOMMIT
  MoreResultsExists: 0x0008, // SERVER_MORE_RESULTS_EXISTS
  NoGoodIndexUsed: 0x0010, // SERVER_QUERY_NO_GOOD_INDEX_USED
  NoIndexUsed: 0x0020, // SERVER_QUERY_NO_INDEX_USED
  CursorExists: 0x0040, // SERVER_STATUS_CURSOR_EXISTS
  LastRowSent: 0x0080, // SERVER_STATUS_LAST_ROW_SENT
  DbDropped: 0x0100, // SERVER_STATUS_DB_DROPPED
  NoBackslashEscapes: 0x0200, // SERVER_STATUS_NO_BACKSLASH_ESCAPES
  MetadataChanged: 0x0400, // SERVER_STATUS_METADATA_CHANGED
  QueryWasSlow: 0x0800, // SERVER_QUERY_WAS_SLOW
  PsOutParams: 0x1000, // SERVER_PS_OUT_PARAMS
  InTransReadonly: 0x2000, // SERVER_STATUS_IN_TRANS_READONLY
  SessionStateChanged: 0x4000, // SERVER_SESSION_STATE_CHANGED
} as const;

/** The capabilities negotiated for one connection: the intersection of both sides' flags. */
export interface NegotiatedCapabilities {
  /** The standard 32-bit flags (unsigned). */
  readonly flags: number;
  /** MariaDB extended flags; 0 against MySQL or when either side sets CLIENT_MYSQL. */
  readonly mariaDb: number;
}

/** True when `flag` is set in `flags` (works for bit 31 too). */
export function hasFlag(flags: number, flag: number): boolean {
  return (flags & flag) !== 0;
}

/** The flags both sides support, as an unsigned 32-bit number. */
export function intersectFlags(a: number, b: number): number {
  return (a & b) >>> 0;
}

/** Capabilities a server built with this codec advertises by default (MySQL 8 style, no TLS, no compression). */
export const DEFAULT_SERVER_CAPABILITIES =
  (Capability.LongPassword |
    Capability.FoundRows |
    Capability.LongFlag |
    Capability.ConnectWithDb |
    Capability.NoSchema |
    Capability.Odbc |
    Capability.IgnoreSpace |
    Capability.Protocol41 |
    Capability.Interactive |
    Capability.IgnoreSigpipe |
    Capability.Transactions |
    Capability.SecureConnection |
    Capability.MultiStatements |
    Capability.MultiResults |
    Capability.PsMultiResults |
    Capability.PluginAuth |
    Capability.ConnectAttrs |
    Capability.PluginAuthLenencClientData |
    Capability.CanHandleExpiredPasswords |
    Capability.SessionTrack |
    Capability.DeprecateEof) >>>
  0;

/** Capabilities a client built with this codec asks for by default (before intersecting with the server's). */
export const DEFAULT_CLIENT_CAPABILITIES =
  (Capability.LongPassword |
    Capability.FoundRows |
    Capability.LongFlag |
    Capability.Protocol41 |
    Capability.Transactions |
    Capability.SecureConnection |
    Capability.MultiResults |
    Capability.PsMultiResults |
    Capability.PluginAuth |
    Capability.ConnectAttrs |
    Capability.PluginAuthLenencClientData |
    Capability.SessionTrack |
    Capability.DeprecateEof) >>>
  0;
