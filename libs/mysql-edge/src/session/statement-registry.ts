// A session's prepared statements: the ids the client sees, each statement's text, routing
// template and last parameter types, and long data waiting for its execute. Bounded in count and
// bytes (mysql.max_prepared_statements / max_prepared_statement_bytes); private to the session.
import { Buffer } from 'node:buffer';
import type { ParameterType } from '@dbproxy/protocol-mysql';
import type { PreparedRoute, SqlRoute } from '@dbproxy/sql';
import type { DbproxyError } from '@dbproxy/util';
import type { CatalogEntry, StatementCatalog } from '../backend/statement-catalog';
import { MysqlEdgeErrors } from '../errors';

export interface ClientStatement {
  readonly id: number;
  /** The shared entry: statement bytes, the database and character set state it was prepared in. */
  readonly entry: CatalogEntry;
  readonly paramCount: number;
  readonly prepared: PreparedRoute;
  /** The route of every execution when it does not depend on parameter values (unsharded, not SET autocommit = ?). */
  readonly fixedRoute: SqlRoute | null;
  /** Parameter type bytes (2 per parameter) from the last COM_STMT_EXECUTE that sent them. */
  types: Buffer | null;
  /** `types` decoded for routing an execute that does not resend them, and the buffer they came from. */
  previousTypes: ParameterType[] | null;
  previousTypesOf: Buffer | null;
  /** COM_STMT_SEND_LONG_DATA payloads since the last execute, replayed before it. */
  longData: Buffer[] | null;
  longDataParams: Set<number> | null;
  longDataError: DbproxyError | null;
  bytes: number;
}

export interface StatementSource {
  readonly sql: Buffer;
  readonly schema: string | null;
  readonly charsetKey: string;
}

export interface StatementLimits {
  readonly maxStatements: number;
  readonly maxBytes: number;
}

export class StatementRegistry {
  private readonly byId = new Map<number, ClientStatement>();
  private nextId = 1;
  private bytes = 0;

  constructor(private readonly catalog: StatementCatalog) {}

  get size(): number {
    return this.byId.size;
  }

  /** A fresh client id, or the error when one more statement of `textBytes` would exceed the limits. */
  reserve(textBytes: number, limits: StatementLimits): number | DbproxyError {
    if (this.byId.size >= limits.maxStatements) return MysqlEdgeErrors.tooManyStatements(limits.maxStatements);
    if (this.bytes + textBytes > limits.maxBytes) return MysqlEdgeErrors.statementMemory(limits.maxBytes);
    const id = this.nextId;
    this.nextId = (this.nextId % 0xfffffffe) + 1;
    return id;
  }

  /** What a statement was prepared as: the client's bytes, in which database and character set state. */
  add(id: number, source: StatementSource, paramCount: number, prepared: PreparedRoute, fixedRoute: SqlRoute | null): ClientStatement {
    const bytes = source.sql.length;
    const statement: ClientStatement = {
      id,
      entry: this.catalog.acquire(source.sql, source.schema, source.charsetKey),
      paramCount,
      prepared,
      fixedRoute,
      types: null,
      previousTypes: null,
      previousTypesOf: null,
      longData: null,
      longDataParams: null,
      longDataError: null,
      bytes,
    };
    this.byId.set(id, statement);
    this.bytes += bytes;
    return statement;
  }

  get(id: number): ClientStatement | undefined {
    return this.byId.get(id);
  }

  /** COM_STMT_CLOSE: the client id goes; backend copies close once no session holds the text. */
  close(id: number): void {
    const statement = this.byId.get(id);
    if (!statement) return;
    this.byId.delete(id);
    this.bytes -= statement.bytes;
    this.catalog.release(statement.entry);
  }

  /** COM_STMT_SEND_LONG_DATA: kept (bounded) until the execute; an overflow is reported by the execute. */
  appendLongData(statement: ClientStatement, paramId: number, payload: Buffer, maxBytes: number): void {
    if (statement.longDataError) return;
    if (this.bytes + payload.length > maxBytes) {
      statement.longDataError = MysqlEdgeErrors.statementMemory(maxBytes);
      this.dropLongData(statement);
      return;
    }
    (statement.longData ??= []).push(Buffer.from(payload));
    (statement.longDataParams ??= new Set()).add(paramId);
    statement.bytes += payload.length;
    this.bytes += payload.length;
  }

  /** After an execute (which consumed it) or COM_STMT_RESET. */
  dropLongData(statement: ClientStatement): void {
    if (statement.longData) {
      const size = statement.longData.reduce((n, b) => n + b.length, 0);
      statement.bytes -= size;
      this.bytes -= size;
    }
    statement.longData = null;
    statement.longDataParams = null;
  }

  /** COM_RESET_CONNECTION, COM_CHANGE_USER, session end. */
  clear(): void {
    for (const statement of this.byId.values()) this.catalog.release(statement.entry);
    this.byId.clear();
    this.bytes = 0;
  }
}
