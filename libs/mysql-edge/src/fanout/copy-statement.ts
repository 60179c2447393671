// What a fanout copy sends: the client's statement as it ran on its own shard, captured at
// dispatch with the session state it needs on another connection (database, character set).
import { Buffer } from 'node:buffer';
import type { MysqlPacket } from '@dbproxy/protocol-mysql';
import type { ClientStatement } from '../session/statement-registry';

export interface CopyStatement {
  /** COM_QUERY: `payload` is the client's command payload (0x03 + text). COM_STMT_EXECUTE: `sql` is prepared, then `payload` executed. */
  readonly kind: 'query' | 'execute';
  readonly payload: Buffer;
  /** The prepared statement's text as the client sent it (execute only). */
  readonly sql: Buffer | null;
  /** COM_STMT_SEND_LONG_DATA payloads the execution used (execute only). */
  readonly longData: readonly Buffer[] | null;
  /** The database the statement ran in (for an execute: the one it was prepared in). */
  readonly schema: string | null;
  /** The session's SET NAMES state and the statement that restores it. */
  readonly charsetKey: string;
  readonly charsetSql: string;
  /** The statement's fingerprint: what logs show (never literal values). */
  readonly fingerprint: string;
  /** Memory it holds while queued (transaction bound). */
  readonly bytes: number;
}

export interface SessionCopyState {
  readonly schema: string | null;
  readonly charsetKey: string;
  charsetStatement(): string;
}

/** A COM_QUERY copy: the client's bytes. */
export function queryCopy(packet: MysqlPacket, session: SessionCopyState, fingerprint: string): CopyStatement {
  const payload = Buffer.from(packet.payload);
  return { kind: 'query', payload, sql: null, longData: null, schema: session.schema, charsetKey: session.charsetKey, charsetSql: session.charsetStatement(), fingerprint, bytes: payload.length };
}

/** Offset of the new-params-bound flag in a COM_STMT_EXECUTE payload with `n` parameters. */
const boundFlagAt = (n: number): number => 10 + ((n + 7) >> 3);

/**
 * A COM_STMT_EXECUTE copy: the client's execute with the parameter types always bound (the copy's
 * statement is prepared fresh on the target connection) and no cursor.
 */
export function executeCopy(packet: MysqlPacket, statement: ClientStatement, session: SessionCopyState, fingerprint: string): CopyStatement {
  const n = statement.paramCount;
  const at = boundFlagAt(n);
  let payload = Buffer.from(packet.payload);
  if (n > 0 && payload[at] !== 1 && statement.types !== null) payload = Buffer.concat([payload.subarray(0, at), Buffer.of(1), statement.types, payload.subarray(at + 1)]);
  payload[5] = 0; // CURSOR_TYPE_NO_CURSOR
  const longData = statement.longData ? statement.longData.map((d) => Buffer.from(d)) : null;
  const sql = Buffer.from(statement.entry.sql);
  const bytes = payload.length + sql.length + (longData?.reduce((sum, d) => sum + d.length, 0) ?? 0);
  return { kind: 'execute', payload, sql, longData, schema: statement.entry.schema, charsetKey: session.charsetKey, charsetSql: session.charsetStatement(), fingerprint, bytes };
}
