// The XA statements of one branch on one participant connection, each bounded by a deadline:
// past it the connection is destroyed (the server then rolls back a branch that was not prepared).
import type { Connection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { XaErrors } from '../errors';
import { parseRecoverRow, xidSql, type BranchXid } from '../xid';

/** Runs `sql` on `conn`, destroying the connection when `deadline` (ms since epoch) passes first. */
export async function runBounded<T>(conn: Connection, sql: string, what: string, deadline: number): Promise<T> {
  const budget = deadline - Date.now();
  if (budget <= 0) {
    conn.destroy();
    throw XaErrors.deadline(what, 0);
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      conn.destroy();
      reject(XaErrors.deadline(what, budget));
    }, budget);
  });
  try {
    const [result] = await Promise.race([conn.query(sql), expired]);
    return result as T;
  } finally {
    clearTimeout(timer);
  }
}

export interface BranchWork {
  readonly conn: Connection;
  readonly xid: BranchXid;
  readonly statement: string;
  readonly deadline: number;
  /** Test-only fault hook, awaited right before XA PREPARE. */
  readonly beforePrepare?: () => Promise<void>;
}

/** XA START, the statement, XA END, XA PREPARE; the statement's affected rows. */
export async function prepareBranch(work: BranchWork): Promise<number> {
  const x = xidSql(work.xid);
  await runBounded(work.conn, `XA START ${x}`, 'XA START', work.deadline);
  const result = await runBounded<ResultSetHeader>(work.conn, work.statement, 'the statement', work.deadline);
  await runBounded(work.conn, `XA END ${x}`, 'XA END', work.deadline);
  await work.beforePrepare?.();
  await runBounded(work.conn, `XA PREPARE ${x}`, 'XA PREPARE', work.deadline);
  return Number(result.affectedRows ?? 0);
}

export function commitBranch(conn: Connection, xid: BranchXid, deadline: number): Promise<unknown> {
  return runBounded(conn, `XA COMMIT ${xidSql(xid)}`, 'XA COMMIT', deadline);
}

export function rollbackBranch(conn: Connection, xid: BranchXid, deadline: number): Promise<unknown> {
  return runBounded(conn, `XA ROLLBACK ${xidSql(xid)}`, 'XA ROLLBACK', deadline);
}

/** The prepared branches a participant holds (XA RECOVER), XIDs as raw bytes. */
export async function recoverBranches(conn: Connection, deadline: number): Promise<BranchXid[]> {
  const budget = Math.max(1, deadline - Date.now());
  const [rows] = await conn.query<RowDataPacket[]>({
    sql: 'XA RECOVER',
    timeout: budget,
    typeCast: (field, next) => (field.name === 'data' ? field.buffer() : next()),
  });
  return rows.map((r) => parseRecoverRow(r as { formatID: unknown; gtrid_length: unknown; bqual_length: unknown; data: unknown }));
}

/** errno 1397 ER_XAER_NOTA: the server does not know the XID (already settled). */
export function isUnknownXid(err: unknown): boolean {
  return (err as { errno?: number })?.errno === 1397;
}
