// Command-phase packets from the client: every COM_* code, a decoder into a union, and encoders.
import { Capability, hasFlag } from './capabilities';
import { PacketReader, type PacketWriter } from './cursor';
import { MalformedPacket, UnknownCommand, UnsupportedFeature } from './errors';
import { readParameterBlock, toTypedParameter, writeParameterBlock, type QueryAttribute } from './parameters';
import { readStmtExecuteHeader, type StmtExecuteHeader } from './stmt';

/** The first payload byte of a client command. */
export const Command = {
  Sleep: 0x00, // COM_SLEEP
  Quit: 0x01, // COM_QUIT
  InitDb: 0x02, // COM_INIT_DB
  Query: 0x03, // COM_QUERY
  FieldList: 0x04, // COM_FIELD_LIST
  CreateDb: 0x05, // COM_CREATE_DB
  DropDb: 0x06, // COM_DROP_DB
  Refresh: 0x07, // COM_REFRESH
  Shutdown: 0x08, // COM_SHUTDOWN
  Statistics: 0x09, // COM_STATISTICS
  ProcessInfo: 0x0a, // COM_PROCESS_INFO
  Connect: 0x0b, // COM_CONNECT
  ProcessKill: 0x0c, // COM_PROCESS_KILL
  Debug: 0x0d, // COM_DEBUG
  Ping: 0x0e, // COM_PING
  Time: 0x0f, // COM_TIME
  DelayedInsert: 0x10, // COM_DELAYED_INSERT
  ChangeUser: 0x11, // COM_CHANGE_USER
  BinlogDump: 0x12, // COM_BINLOG_DUMP
  TableDump: 0x13, // COM_TABLE_DUMP
  ConnectOut: 0x14, // COM_CONNECT_OUT
  RegisterSlave: 0x15, // COM_REGISTER_SLAVE
  StmtPrepare: 0x16, // COM_STMT_PREPARE
  StmtExecute: 0x17, // COM_STMT_EXECUTE
  StmtSendLongData: 0x18, // COM_STMT_SEND_LONG_DATA
  StmtClose: 0x19, // COM_STMT_CLOSE
  StmtReset: 0x1a, // COM_STMT_RESET
  SetOption: 0x1b, // COM_SET_OPTION
  StmtFetch: 0x1c, // COM_STMT_FETCH
  Daemon: 0x1d, // COM_DAEMON
  BinlogDumpGtid: 0x1e, // COM_BINLOG_DUMP_GTID
  ResetConnection: 0x1f, // COM_RESET_CONNECTION
  Clone: 0x20, // COM_CLONE
  SubscribeGroupReplicationStream: 0x21, // COM_SUBSCRIBE_GROUP_REPLICATION_STREAM
  StmtBulkExecute: 0xfa, // COM_STMT_BULK_EXECUTE (MariaDB)
  Multi: 0xfe, // COM_MULTI (MariaDB)
} as const;

export type CommandCode = (typeof Command)[keyof typeof Command];

const KNOWN_CODES = new Set<number>(Object.values(Command));

/** COM_SET_OPTION values. */
export const SetOption = {
  MultiStatementsOn: 0, // MYSQL_OPTION_MULTI_STATEMENTS_ON
  MultiStatementsOff: 1, // MYSQL_OPTION_MULTI_STATEMENTS_OFF
} as const;

export type ClientCommand =
  | { readonly kind: 'quit' }
  | { readonly kind: 'ping' }
  | { readonly kind: 'statistics' }
  | { readonly kind: 'reset-connection' }
  | { readonly kind: 'query'; readonly sql: string; readonly attributes: readonly QueryAttribute[] }
  | { readonly kind: 'init-db'; readonly schema: string }
  | { readonly kind: 'field-list'; readonly table: string; readonly wildcard: string }
  | { readonly kind: 'change-user'; readonly username: string; readonly authResponse: Buffer; readonly database: string; readonly characterSet: number | null; readonly authPlugin: string | null; readonly connectAttributes: ReadonlyMap<string, string> | null }
  | { readonly kind: 'stmt-prepare'; readonly sql: string }
  /** Header only: decode the parameters with `decodeStmtExecute` once the statement's parameter count is known. */
  | ({ readonly kind: 'stmt-execute' } & StmtExecuteHeader)
  | { readonly kind: 'stmt-send-long-data'; readonly statementId: number; readonly paramId: number; readonly data: Buffer }
  | { readonly kind: 'stmt-close'; readonly statementId: number }
  | { readonly kind: 'stmt-reset'; readonly statementId: number }
  | { readonly kind: 'stmt-fetch'; readonly statementId: number; readonly rowCount: number }
  | { readonly kind: 'set-option'; readonly option: number }
  | { readonly kind: 'process-kill'; readonly connectionId: number }
  /** A known command the codec does not take apart (replication, debug, ...): the body is raw. */
  | { readonly kind: 'other'; readonly command: CommandCode; readonly body: Buffer };

export interface CommandDecodeOptions {
  readonly capabilities: number;
  readonly encoding?: BufferEncoding;
}

/** Decodes a command packet's payload. */
export function decodeCommand(payload: Buffer, options: CommandDecodeOptions): ClientCommand {
  const r = new PacketReader(payload);
  const code = r.u8('command');
  const enc = options.encoding ?? 'utf8';
  switch (code) {
    case Command.Quit:
      return { kind: 'quit' };
    case Command.Ping:
      return { kind: 'ping' };
    case Command.Statistics:
      return { kind: 'statistics' };
    case Command.ResetConnection:
      return { kind: 'reset-connection' };
    case Command.Query:
      return decodeQuery(r, options.capabilities, enc);
    case Command.InitDb:
      return { kind: 'init-db', schema: r.restString(enc) };
    case Command.FieldList:
      return { kind: 'field-list', table: r.nulString('table', enc), wildcard: r.restString(enc) };
    case Command.ChangeUser:
      return decodeChangeUser(r, options.capabilities, enc);
    case Command.StmtPrepare:
      return { kind: 'stmt-prepare', sql: r.restString(enc) };
    case Command.StmtExecute:
      return { kind: 'stmt-execute', ...readStmtExecuteHeader(r) };
    case Command.StmtSendLongData:
      return { kind: 'stmt-send-long-data', statementId: r.u32('statement id'), paramId: r.u16('param id'), data: r.rest() };
    case Command.StmtClose:
      return { kind: 'stmt-close', statementId: r.u32('statement id') };
    case Command.StmtReset:
      return { kind: 'stmt-reset', statementId: r.u32('statement id') };
    case Command.StmtFetch:
      return { kind: 'stmt-fetch', statementId: r.u32('statement id'), rowCount: r.u32('row count') };
    case Command.SetOption:
      return { kind: 'set-option', option: r.u16('option') };
    case Command.ProcessKill:
      return { kind: 'process-kill', connectionId: r.u32('connection id') };
    case Command.StmtBulkExecute:
      throw UnsupportedFeature('COM_STMT_BULK_EXECUTE (MariaDB bulk parameter arrays)');
    case Command.Multi:
      throw UnsupportedFeature('COM_MULTI');
    default:
      if (!KNOWN_CODES.has(code)) throw UnknownCommand(code);
      return { kind: 'other', command: code as CommandCode, body: r.rest() };
  }
}

function decodeQuery(r: PacketReader, capabilities: number, encoding: BufferEncoding): ClientCommand {
  const attributes: QueryAttribute[] = [];
  if (hasFlag(capabilities, Capability.QueryAttributes)) {
    const count = r.lenenc('attribute count');
    const sets = r.lenenc('attribute set count');
    if (sets !== 1 && count > 0) throw UnsupportedFeature(`query attributes with ${sets} parameter sets`);
    if (count > 0) {
      const block = readParameterBlock(r, count, { withNames: true, encoding });
      for (let i = 0; i < count; i++) attributes.push({ name: block.names[i], ...block.types[i], value: block.values[i] });
    }
  }
  return { kind: 'query', sql: r.restString(encoding), attributes };
}

function decodeChangeUser(r: PacketReader, capabilities: number, encoding: BufferEncoding): ClientCommand {
  const username = r.nulString('username', encoding);
  const authResponse = hasFlag(capabilities, Capability.SecureConnection) ? r.bytes(r.u8('auth response length'), 'auth response') : r.nulBytes('auth response');
  const database = r.nulString('database', encoding);
  const characterSet = r.remaining >= 2 ? r.u16('character set') : null;
  const authPlugin = hasFlag(capabilities, Capability.PluginAuth) && !r.atEnd() ? r.nulString('auth plugin') : null;
  let connectAttributes: Map<string, string> | null = null;
  if (hasFlag(capabilities, Capability.ConnectAttrs) && !r.atEnd()) {
    const block = new PacketReader(r.lenencBytes('connect attributes'));
    connectAttributes = new Map();
    while (!block.atEnd()) connectAttributes.set(block.lenencString('attribute name'), block.lenencString('attribute value'));
  }
  return { kind: 'change-user', username, authResponse, database, characterSet, authPlugin, connectAttributes };
}

/** Writes a command with no arguments (COM_PING, COM_QUIT, COM_STATISTICS, COM_RESET_CONNECTION, ...). */
export function encodeSimpleCommand(w: PacketWriter, command: CommandCode): number {
  w.begin(0).u8(command);
  return w.end();
}

/** Writes COM_QUERY; under CLIENT_QUERY_ATTRIBUTES the attribute block comes first. */
export function encodeQuery(w: PacketWriter, sql: string, capabilities: number, attributes: readonly QueryAttribute[] = []): number {
  const withAttributes = hasFlag(capabilities, Capability.QueryAttributes);
  if (!withAttributes && attributes.length > 0) throw MalformedPacket('query attributes need CLIENT_QUERY_ATTRIBUTES');
  return w.framed(0, () => {
    w.u8(Command.Query);
    if (withAttributes) w.lenenc(attributes.length).lenenc(1);
    if (attributes.length > 0) writeParameterBlock(w, attributes.map(toTypedParameter), attributes.map((a) => a.name));
    w.string(sql);
  });
}

/** Writes a command whose argument is the rest of the packet (COM_INIT_DB, COM_STMT_PREPARE). */
export function encodeTextCommand(w: PacketWriter, command: typeof Command.InitDb | typeof Command.StmtPrepare, text: string): number {
  w.begin(0).u8(command).string(text);
  return w.end();
}

export function encodeFieldList(w: PacketWriter, table: string, wildcard = ''): number {
  w.begin(0).u8(Command.FieldList).nulString(table).string(wildcard);
  return w.end();
}

/** Writes COM_STMT_CLOSE or COM_STMT_RESET. */
export function encodeStatementCommand(w: PacketWriter, command: typeof Command.StmtClose | typeof Command.StmtReset, statementId: number): number {
  w.begin(0).u8(command).u32(statementId);
  return w.end();
}

export function encodeStmtSendLongData(w: PacketWriter, statementId: number, paramId: number, data: Uint8Array): number {
  w.begin(0).u8(Command.StmtSendLongData).u32(statementId).u16(paramId).bytes(data);
  return w.end();
}

export function encodeStmtFetch(w: PacketWriter, statementId: number, rowCount: number): number {
  w.begin(0).u8(Command.StmtFetch).u32(statementId).u32(rowCount);
  return w.end();
}

export interface ChangeUserFields {
  readonly username: string;
  readonly authResponse: Uint8Array;
  readonly database?: string;
  readonly characterSet: number;
  readonly authPlugin?: string;
}

/** Writes COM_CHANGE_USER (capabilities must include CLIENT_SECURE_CONNECTION and PLUGIN_AUTH to carry the plugin). */
export function encodeChangeUser(w: PacketWriter, cu: ChangeUserFields, capabilities: number): number {
  if (cu.authResponse.length > 255) throw MalformedPacket('COM_CHANGE_USER auth response longer than 255 bytes');
  w.begin(0).u8(Command.ChangeUser).nulString(cu.username);
  if (hasFlag(capabilities, Capability.SecureConnection)) w.u8(cu.authResponse.length).bytes(cu.authResponse);
  else w.bytes(cu.authResponse).u8(0);
  w.nulString(cu.database ?? '').u16(cu.characterSet);
  if (hasFlag(capabilities, Capability.PluginAuth)) w.nulString(cu.authPlugin ?? '');
  return w.end();
}
