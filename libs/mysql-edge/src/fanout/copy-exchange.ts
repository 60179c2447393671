// One fanout copy on one borrowed backend connection: the session's database and character set
// replayed where the connection differs, then the statement (an execute prepared fresh there and
// closed after), its response read to the end and dropped. The outcome is the server's OK or ERR.
import { Buffer } from 'node:buffer';
import { Command, framePayload, type ErrPacket, type ResponseSummary } from '@dbproxy/protocol-mysql';
import type { DbproxyError } from '@dbproxy/util';
import { Mode, queryPacket, type BackendConnection, type ResponseSink } from '../backend/backend-connection';
import { initDbPacket, longDataPacket, preparePacket, statementPacket } from '../session/command-packets';
import type { CopyStatement } from './copy-statement';

const TAG_MAIN = 1;
const TAG_SCHEMA = 2;
const TAG_CHARSET = 3;
const TAG_PREPARE = 4;

/** How a copy ended on its connection: the server's ERR, or none (it ran). */
export type CopyReply = { readonly ok: true } | { readonly ok: false; readonly err: ErrPacket } | { readonly ok: false; readonly lost: DbproxyError };

export class CopyExchange implements ResponseSink {
  private resolve: ((reply: CopyReply) => void) | null = null;
  private schemaSent: string | null = null;
  private charsetSent = '';
  private preludeError: ErrPacket | null = null;
  private pending = 0;

  constructor(
    private readonly conn: BackendConnection,
    private readonly statement: CopyStatement,
  ) {}

  /** Sends the copy; resolves when its response ended or the connection failed. */
  run(): Promise<CopyReply> {
    const conn = this.conn;
    const s = this.statement;
    return new Promise<CopyReply>((resolve) => {
      this.resolve = resolve;
      conn.attach(this, 'fanout-copy');
      const parts: Buffer[] = [];
      for (const id of conn.statements.closing) parts.push(statementPacket(Command.StmtClose, id));
      conn.statements.closing.length = 0;
      if (s.schema !== null && conn.schema !== s.schema) {
        parts.push(initDbPacket(s.schema));
        conn.expect(Command.InitDb, Mode.Swallow, TAG_SCHEMA, this);
        this.schemaSent = s.schema;
        this.pending++;
      }
      if (conn.charsetKey !== s.charsetKey) {
        parts.push(queryPacket(s.charsetSql));
        conn.expect(Command.Query, Mode.Swallow, TAG_CHARSET, this);
        this.charsetSent = s.charsetKey;
        this.pending++;
      }
      // LAST_INSERT_ID, ROW_COUNT and warnings are the copy's: reset before a client gets the connection
      conn.statementValues = true;
      // the statement waits for the preludes: one that failed (no such database there) must not let it run elsewhere
      if (this.pending > 0) conn.writev(parts);
      else this.main(parts);
    });
  }

  /** The statement itself: COM_QUERY, or COM_STMT_PREPARE first for an execute. */
  private main(parts: Buffer[]): void {
    const conn = this.conn;
    const s = this.statement;
    if (s.kind === 'query') {
      parts.push(framePayload(s.payload, 0));
      conn.expect(Command.Query, Mode.Swallow, TAG_MAIN, this);
    } else {
      parts.push(preparePacket(s.sql as Buffer));
      conn.expect(Command.StmtPrepare, Mode.Swallow, TAG_PREPARE, this);
    }
    conn.writev(parts);
  }

  private execute(id: number): void {
    const s = this.statement;
    const parts: Buffer[] = [];
    for (const data of s.longData ?? []) parts.push(longDataPacket(Buffer.from(data), id));
    const payload = Buffer.from(s.payload);
    payload.writeUInt32LE(id, 1);
    parts.push(framePayload(payload, 0));
    this.conn.expect(Command.StmtExecute, Mode.Swallow, TAG_MAIN, this);
    parts.push(statementPacket(Command.StmtClose, id)); // no response
    this.conn.writev(parts);
  }

  deliver(): void {
    // nothing of a copy's response reaches a client
  }

  responseEnd(tag: number, summary: ResponseSummary): void {
    const conn = this.conn;
    switch (tag) {
      case TAG_SCHEMA:
      case TAG_CHARSET:
        if (summary.err) this.preludeError ??= summary.err;
        else if (tag === TAG_SCHEMA) conn.schema = this.schemaSent;
        else conn.charsetKey = this.charsetSent;
        if (--this.pending > 0) return;
        if (this.preludeError) return this.end({ ok: false, err: this.preludeError });
        return this.main([]);
      case TAG_PREPARE: {
        if (summary.err) return this.end({ ok: false, err: summary.err });
        if (!summary.prepared) return this.end({ ok: false, err: { kind: 'err', code: 1105, sqlState: 'HY000', message: 'prepare answered without a statement' } });
        return this.execute(summary.prepared.statementId);
      }
      default:
        return this.end(summary.err ? { ok: false, err: summary.err } : { ok: true });
    }
  }

  connectionFailed(err: DbproxyError): void {
    this.end({ ok: false, lost: err });
  }

  /** The copy was abandoned (timeout): the connection is closed, never reused half-way. */
  abandon(): void {
    this.conn.detach(this, 'fanout-timeout');
    this.conn.close('fanout-timeout');
    this.resolve = null;
  }

  private end(reply: CopyReply): void {
    const resolve = this.resolve;
    this.resolve = null;
    this.conn.detach(this, 'fanout-copy-done');
    resolve?.(reply);
  }
}
