// A tiny MySQL client for integration tests, built from node:net and this codec only.
import { connect, type Socket } from 'node:net';
import {
  ClientAuthExchange,
  Command,
  decodeBinaryRow,
  decodeInitialHandshake,
  decodeTextRow,
  encodeAuthData,
  encodeHandshakeResponse,
  encodeQuery,
  encodeSimpleCommand,
  encodeStatementCommand,
  encodeStmtExecute,
  encodeTextCommand,
  encodeFieldList,
  PacketFramer,
  PacketWriter,
  ResponseTracker,
  type ClientAuthOptions,
  type ClientAuthStep,
  type InitialHandshake,
  type MysqlPacket,
  type MysqlValue,
  type ResponsePacketRole,
  type ResponseSummary,
  type TypedParameter,
} from '../src';

export interface CommandResult {
  readonly summary: ResponseSummary;
  readonly roles: ResponsePacketRole[];
  readonly rows: MysqlValue[][];
}

export class WireClient {
  private readonly framer = new PacketFramer();
  private readonly writer = new PacketWriter();
  private readonly queue: MysqlPacket[] = [];
  private waiter: ((p: MysqlPacket) => void) | null = null;
  private failure: Error | null = null;
  greeting: InitialHandshake | null = null;
  capabilities = 0;
  tracker: ResponseTracker | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      try {
        this.framer.feed(chunk, (p) => {
          if (this.waiter) {
            const w = this.waiter;
            this.waiter = null;
            w(p);
          } else this.queue.push(p);
        });
      } catch (err) {
        this.failure = err as Error;
      }
    });
    socket.on('error', (err) => (this.failure = err));
  }

  static open(port: number, host = '127.0.0.1'): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host, () => resolve(new WireClient(socket)));
      socket.once('error', reject);
    });
  }

  next(): Promise<MysqlPacket> {
    if (this.failure) return Promise.reject(this.failure);
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no packet within 5 s')), 5000);
      this.waiter = (p) => {
        clearTimeout(timer);
        resolve(p);
      };
    });
  }

  private flush(): void {
    this.socket.write(this.writer.flush());
  }

  /** Runs the connection phase; resolves with the last auth step (done or failed). */
  async login(options: ClientAuthOptions): Promise<ClientAuthStep> {
    this.greeting = decodeInitialHandshake((await this.next()).payload);
    const exchange = new ClientAuthExchange(options);
    const response = exchange.respond(this.greeting);
    this.capabilities = exchange.capabilities;
    encodeHandshakeResponse(this.writer, 1, response);
    this.flush();
    for (;;) {
      const packet = await this.next();
      const step = exchange.next(packet.payload);
      if (step.kind !== 'send') {
        if (step.kind === 'done') this.tracker = new ResponseTracker({ capabilities: this.capabilities, collectColumns: true });
        if (step.kind !== 'wait') return step;
        continue;
      }
      encodeAuthData(this.writer, packet.sequenceId + 1, step.data);
      this.flush();
    }
  }

  /** Sends the written command and collects the response; rows are decoded text or binary. */
  private async collect(command: number, binary: boolean, onInfile?: (seq: number) => void): Promise<CommandResult> {
    const tracker = this.tracker as ResponseTracker;
    this.flush();
    const roles: ResponsePacketRole[] = [];
    const rows: MysqlValue[][] = [];
    if (!tracker.begin(command)) return { summary: tracker.summary, roles, rows: [] };
    for (;;) {
      const packet = await this.next();
      const step = tracker.feed(packet);
      roles.push(step.role);
      // Rows are decoded with the columns of their own result set (multi-results change them).
      if (step.role === 'row') rows.push(binary ? decodeBinaryRow(packet.payload, tracker.summary.columns) : decodeTextRow(packet.payload, tracker.summary.columns));
      if (step.role === 'local-infile' && onInfile) onInfile(packet.sequenceId);
      if (step.complete) break;
    }
    return { summary: tracker.summary, roles, rows };
  }

  /** Sends bytes built elsewhere as a command and collects its response. */
  sendRaw(command: number, bytes: Buffer, binary: boolean): Promise<CommandResult> {
    this.writer.bytes(bytes);
    return this.collect(command, binary);
  }

  query(sql: string): Promise<CommandResult> {
    encodeQuery(this.writer, sql, this.capabilities);
    return this.collect(Command.Query, false, (seq) => {
      // Refuse LOCAL INFILE: an empty packet says "no data".
      this.writer.begin(seq + 1).end();
      this.flush();
    });
  }

  simple(command: typeof Command.Ping | typeof Command.Statistics | typeof Command.ResetConnection): Promise<CommandResult> {
    encodeSimpleCommand(this.writer, command);
    return this.collect(command, false);
  }

  initDb(schema: string): Promise<CommandResult> {
    encodeTextCommand(this.writer, Command.InitDb, schema);
    return this.collect(Command.InitDb, false);
  }

  fieldList(table: string): Promise<CommandResult> {
    encodeFieldList(this.writer, table);
    return this.collect(Command.FieldList, false);
  }

  prepare(sql: string): Promise<CommandResult> {
    encodeTextCommand(this.writer, Command.StmtPrepare, sql);
    return this.collect(Command.StmtPrepare, false);
  }

  execute(statementId: number, params: readonly (MysqlValue | TypedParameter)[]): Promise<CommandResult> {
    encodeStmtExecute(this.writer, { statementId, params }, this.capabilities);
    return this.collect(Command.StmtExecute, true);
  }

  close(statementId: number): Promise<CommandResult> {
    encodeStatementCommand(this.writer, Command.StmtClose, statementId);
    return this.collect(Command.StmtClose, false);
  }

  end(): void {
    encodeSimpleCommand(this.writer, Command.Quit);
    this.flush();
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }
}
