// A small MySQL server for integration tests, built from node:net/tls and this codec only:
// handshake, authentication, COM_QUERY with a fixed text result, prepared statements that echo
// their parameters back as a binary result set.
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import {
  BINARY_COLLATION,
  Capability,
  CachingSha2Message,
  Collation,
  ColumnFlag,
  ColumnType,
  DEFAULT_SERVER_CAPABILITIES,
  PacketFramer,
  PacketWriter,
  ServerAuthExchange,
  ServerStatus,
  columnDefinition,
  decodeClientHandshake,
  decodeCommand,
  decodeStmtExecute,
  encodeAuthMoreData,
  encodeAuthSwitchRequest,
  encodeErr,
  encodeInitialHandshake,
  encodeOk,
  encodeResultSet,
  encodeStmtPrepareResponse,
  intersectFlags,
  isBlobType,
  type AccountCredential,
  type ColumnDefinition,
  type HandshakeResponse,
  type MysqlPacket,
  type MysqlValue,
  type ServerAuthPlugin,
  type ServerAuthStep,
  type Sha2DigestCache,
  type StmtExecute,
} from '../src';

export interface CodecServerOptions {
  readonly authPlugin: ServerAuthPlugin;
  readonly accounts: ReadonlyMap<string, AccountCredential>;
  readonly sha2Cache: Sha2DigestCache;
  readonly rsa?: { readonly privateKey: string; readonly publicKeyPem: string };
  readonly tls?: { readonly key: string; readonly cert: string };
}

/** What one connection went through, for assertions. */
export interface SessionRecord {
  readonly authSteps: string[];
  handshake: HandshakeResponse | null;
  secure: boolean;
  readonly executes: StmtExecute[];
}

export const FRUIT_COLUMNS: ColumnDefinition[] = [
  columnDefinition({ name: 'id', table: 'fruits', type: ColumnType.LongLong, flags: ColumnFlag.Unsigned | ColumnFlag.NotNull | ColumnFlag.PrimaryKey, characterSet: BINARY_COLLATION, columnLength: 20 }),
  columnDefinition({ name: 'name', table: 'fruits', type: ColumnType.VarString, columnLength: 160 }),
  columnDefinition({ name: 'price', table: 'fruits', type: ColumnType.NewDecimal, decimals: 2, characterSet: BINARY_COLLATION, columnLength: 12 }),
  columnDefinition({ name: 'picked', table: 'fruits', type: ColumnType.DateTime, characterSet: BINARY_COLLATION, columnLength: 19 }),
  columnDefinition({ name: 'note', table: 'fruits', type: ColumnType.Blob, flags: ColumnFlag.Blob, columnLength: 65535 }),
  columnDefinition({ name: 'ratio', table: 'fruits', type: ColumnType.Double, characterSet: BINARY_COLLATION, columnLength: 22, decimals: 31 }),
  columnDefinition({ name: 'raw', table: 'fruits', type: ColumnType.Blob, flags: ColumnFlag.Blob | ColumnFlag.Binary, characterSet: BINARY_COLLATION, columnLength: 65535 }),
];

export const FRUIT_ROWS: MysqlValue[][] = [
  [1n, 'äpfel', '1.50', { kind: 'datetime', year: 2024, month: 9, day: 1, hour: 7, minute: 30, second: 0, microsecond: 0 }, 'crisp', 0.25, Buffer.from([0, 255])],
  [18446744073709551615n, 'kiwi', '-0.99', { kind: 'datetime', year: 1999, month: 12, day: 31, hour: 23, minute: 59, second: 59, microsecond: 0 }, null, -1e300, Buffer.alloc(0)],
];

export class CodecServer {
  private readonly server: Server;
  readonly sessions: SessionRecord[] = [];
  private nextConnectionId = 1;

  constructor(options: CodecServerOptions) {
    this.server = createServer((socket) => new ServerSession(socket, options, this.record(), this.nextConnectionId++).start());
  }

  private record(): SessionRecord {
    const record: SessionRecord = { authSteps: [], handshake: null, secure: false, executes: [] };
    this.sessions.push(record);
    return record;
  }

  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as AddressInfo).port)));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

type Phase = 'handshake' | 'auth' | 'command';

class ServerSession {
  private framer = new PacketFramer();
  private readonly writer = new PacketWriter();
  private readonly scramble = randomBytes(20);
  private phase: Phase = 'handshake';
  private capabilities = 0;
  private auth: ServerAuthExchange | null = null;
  private readonly statements = new Map<number, number>();
  private nextStatementId = 1;
  private readonly serverCapabilities: number;

  constructor(
    private socket: Socket,
    private readonly options: CodecServerOptions,
    private readonly record: SessionRecord,
    private readonly connectionId: number,
  ) {
    this.serverCapabilities = (DEFAULT_SERVER_CAPABILITIES | Capability.QueryAttributes | (options.tls ? Capability.Ssl : 0)) >>> 0;
  }

  start(): void {
    this.socket.on('data', this.onData);
    this.socket.on('error', () => this.socket.destroy());
    encodeInitialHandshake(this.writer, {
      serverVersion: '8.0.36-dbproxy-test',
      connectionId: this.connectionId,
      scramble: this.scramble,
      capabilities: this.serverCapabilities,
      characterSet: Collation.utf8mb4_general_ci,
      statusFlags: ServerStatus.Autocommit,
      authPlugin: this.options.authPlugin,
    });
    this.flush();
  }

  private readonly onData = (chunk: Buffer): void => {
    try {
      const rest = this.framer.feed(chunk, (p) => this.onPacket(p));
      if (rest !== undefined) this.startTls(rest);
    } catch (err) {
      this.fail(err);
    }
  };

  private flush(): void {
    if (this.writer.length > 0) this.socket.write(this.writer.flush());
  }

  private fail(err: unknown): void {
    encodeErr(this.writer, 0, { code: 1047, sqlState: '08S01', message: String(err) }, this.capabilities);
    this.flush();
    this.socket.end();
  }

  /** Returns false after an SSLRequest so the framer stops before the TLS bytes. */
  private onPacket(p: MysqlPacket): boolean {
    if (this.phase === 'handshake') return this.onHandshake(p);
    if (this.phase === 'auth') this.onAuthStep((this.auth as ServerAuthExchange).next(Buffer.from(p.payload)), p.sequenceId + 1);
    else this.onCommand(p.payload);
    this.flush();
    return true;
  }

  private onHandshake(p: MysqlPacket): boolean {
    const hello = decodeClientHandshake(p.payload);
    this.capabilities = intersectFlags(hello.capabilities, this.serverCapabilities);
    if (hello.kind === 'ssl-request') return false;
    this.record.handshake = hello;
    this.auth = new ServerAuthExchange({
      scramble: this.scramble,
      account: this.options.accounts.get(hello.username) ?? null,
      cacheKey: hello.username,
      secure: this.record.secure,
      sha2Cache: this.options.sha2Cache,
      rsa: this.options.rsa,
    });
    this.phase = 'auth';
    this.onAuthStep(this.auth.start(hello), p.sequenceId + 1);
    this.flush();
    return true;
  }

  private startTls(rest: Buffer): void {
    const tls = this.options.tls;
    if (!tls) throw new Error('SSLRequest without TLS configured');
    this.socket.removeListener('data', this.onData);
    this.socket.pause();
    if (rest.length > 0) this.socket.unshift(rest);
    this.socket = new TLSSocket(this.socket, { isServer: true, key: tls.key, cert: tls.cert });
    this.record.secure = true;
    this.framer = new PacketFramer();
    this.socket.on('data', this.onData);
    this.socket.on('error', () => this.socket.destroy());
  }

  private onAuthStep(step: ServerAuthStep, seq: number): void {
    this.record.authSteps.push(describeStep(step));
    switch (step.kind) {
      case 'more-data':
        encodeAuthMoreData(this.writer, seq, step.data);
        return;
      case 'switch':
        encodeAuthSwitchRequest(this.writer, seq, step.plugin, step.data);
        return;
      case 'accept': {
        const next = step.fastAuthSuccess ? encodeAuthMoreData(this.writer, seq, Buffer.of(CachingSha2Message.FastAuthSuccess)) : seq;
        encodeOk(this.writer, next, { statusFlags: ServerStatus.Autocommit }, this.capabilities);
        this.phase = 'command';
        return;
      }
      case 'reject':
        encodeErr(this.writer, seq, { code: 1045, sqlState: '28000', message: `Access denied (${step.reason})` }, this.capabilities);
        this.flush();
        this.socket.end();
    }
  }

  private onCommand(payload: Buffer): void {
    const command = decodeCommand(payload, { capabilities: this.capabilities });
    switch (command.kind) {
      case 'query':
        if (/^select \* from fruits/i.test(command.sql)) encodeResultSet(this.writer, 1, { columns: FRUIT_COLUMNS, rows: FRUIT_ROWS, end: { statusFlags: ServerStatus.Autocommit } }, this.capabilities);
        else encodeErr(this.writer, 1, { code: 1146, sqlState: '42S02', message: `no table for ${command.sql}` }, this.capabilities);
        return;
      case 'stmt-prepare':
        return this.prepare(command.sql);
      case 'stmt-execute':
        return this.execute(payload);
      case 'ping':
      case 'reset-connection':
        encodeOk(this.writer, 1, { statusFlags: ServerStatus.Autocommit }, this.capabilities);
        return;
      case 'stmt-close':
        this.statements.delete(command.statementId);
        return;
      case 'quit':
        this.flush();
        this.socket.end();
        return;
      default:
        encodeErr(this.writer, 1, { code: 1047, sqlState: '08S01', message: `unsupported ${command.kind}` }, this.capabilities);
    }
  }

  private prepare(sql: string): void {
    const paramCount = (sql.match(/\?/g) ?? []).length;
    const id = this.nextStatementId++;
    this.statements.set(id, paramCount);
    const defs = Array.from({ length: paramCount }, (_, i) => columnDefinition({ name: `p${i}`, type: ColumnType.VarString }));
    encodeStmtPrepareResponse(this.writer, 1, { statementId: id, params: defs, columns: defs }, this.capabilities);
  }

  /** Echoes the decoded parameters back as one binary row typed like the parameters. */
  private execute(payload: Buffer): void {
    const header = payload.readUInt32LE(1);
    const paramCount = this.statements.get(header);
    if (paramCount === undefined) {
      encodeErr(this.writer, 1, { code: 1243, sqlState: 'HY000', message: 'Unknown prepared statement handler' }, this.capabilities);
      return;
    }
    const exec = decodeStmtExecute(payload, { paramCount, capabilities: this.capabilities });
    this.record.executes.push(exec);
    const columns = exec.parameterTypes.map(({ type, unsigned }, i) =>
      columnDefinition({
        name: `p${i}`,
        type,
        flags: unsigned ? ColumnFlag.Unsigned : 0,
        characterSet: isTextType(type) ? Collation.utf8mb4_general_ci : BINARY_COLLATION,
      }),
    );
    encodeResultSet(this.writer, 1, { columns, rows: [exec.params], binary: true, end: { statusFlags: ServerStatus.Autocommit } }, this.capabilities);
  }
}

const TEXT_TYPES = new Set<number>([ColumnType.VarString, ColumnType.String, ColumnType.VarChar, ColumnType.Json, ColumnType.Enum, ColumnType.Set]);

function isTextType(type: number): boolean {
  return TEXT_TYPES.has(type) && !isBlobType(type);
}

function describeStep(step: ServerAuthStep): string {
  switch (step.kind) {
    case 'more-data':
      return step.data.length === 1 ? `more-data:${step.data[0]}` : 'more-data:public-key';
    case 'switch':
      return `switch:${step.plugin}`;
    case 'accept':
      return step.fastAuthSuccess ? 'accept:fast' : 'accept';
    case 'reject':
      return `reject:${step.reason}`;
  }
}

