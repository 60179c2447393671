// Prepared statements on backend connections. A backend statement is keyed by what the server
// binds it to when it is prepared: the SQL bytes as the client sent them, the default database
// then current (MariaDB resolves unqualified tables at prepare time; a later COM_INIT_DB does not
// move a prepared statement) and the character set state. It is shared by every session that
// prepared the same key (it holds no client data), so a hot statement is prepared once per pooled
// connection. The catalog counts the client statements open on each key; when the last one closes
// (COM_STMT_CLOSE or session end), every backend connection holding a copy closes it: at once when
// the connection is idle, else before its next command.

/** Where copies of a statement live (a backend connection's statement set). */
export interface StatementHost {
  drop(entry: CatalogEntry): void;
}

/** One statement prepared by at least one client session of this process. */
export interface CatalogEntry {
  readonly key: string;
  /** The client's statement bytes, re-sent as they are when another connection must prepare it. */
  readonly sql: Buffer;
  /** The default database the statement was prepared in (null: none). */
  readonly schema: string | null;
  refs: number;
  /** Set when the last client statement on the key closed: backend copies must go. */
  closed: boolean;
  readonly hosts: Set<StatementHost>;
}

export class StatementCatalog {
  private readonly entries = new Map<string, CatalogEntry>();

  /** The entry for `sql` prepared in `schema` under character set state `charsetKey` (see collationKey). */
  acquire(sql: Buffer, schema: string | null, charsetKey: string): CatalogEntry {
    const key = statementKey(sql, schema, charsetKey);
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { key, sql, schema, refs: 0, closed: false, hosts: new Set() };
      this.entries.set(key, entry);
    }
    entry.refs++;
    return entry;
  }

  release(entry: CatalogEntry): void {
    if (entry.closed) return;
    entry.refs--;
    if (entry.refs > 0) return;
    entry.closed = true;
    this.entries.delete(entry.key);
    for (const host of entry.hosts) host.drop(entry);
    entry.hosts.clear();
  }

  /** Statements with at least one open client statement. */
  get size(): number {
    return this.entries.size;
  }
}

/** Lengths first, so no choice of bytes in one part can pass for another part. */
function statementKey(sql: Buffer, schema: string | null, charsetKey: string): string {
  return `${schema === null ? '-' : `${schema.length}:${schema}`}/${charsetKey.length}:${charsetKey}/${sql.toString('latin1')}`;
}

/** A statement prepared on one backend connection. */
export interface BackendStatement {
  readonly id: number;
  readonly paramCount: number;
  readonly entry: CatalogEntry;
  /** The parameter type bytes this backend statement was last bound with (COM_STMT_EXECUTE). */
  types: Buffer | null;
}

/**
 * The statements one backend connection holds, bounded (oldest closed first). `closeNow` sends
 * COM_STMT_CLOSE when the connection is idle and says whether it did; otherwise the id waits in
 * `closing` for the connection's next command (COM_STMT_CLOSE has no response).
 */
export class BackendStatements implements StatementHost {
  private readonly byKey = new Map<string, BackendStatement>();
  readonly closing: number[] = [];
  /** The last statement found (an execute looks its statement up two or three times): forgotten on any change. */
  private last: BackendStatement | null = null;

  constructor(
    private readonly bound: number,
    private readonly closeNow: (id: number) => boolean,
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  get(entry: CatalogEntry): BackendStatement | undefined {
    const last = this.last;
    if (last !== null && last.entry === entry) return last;
    const found = this.byKey.get(entry.key);
    if (found === undefined || found.entry !== entry) return undefined;
    this.last = found;
    return found;
  }

  add(entry: CatalogEntry, id: number, paramCount: number): BackendStatement {
    const statement: BackendStatement = { id, paramCount, entry, types: null };
    this.last = null;
    const previous = this.byKey.get(entry.key);
    if (previous !== undefined) this.discard(previous);
    this.byKey.set(entry.key, statement);
    entry.hosts.add(this);
    if (this.byKey.size > this.bound) this.discard(this.byKey.values().next().value as BackendStatement);
    return statement;
  }

  /** The catalog closed `entry`: its copy here goes. */
  drop(entry: CatalogEntry): void {
    const statement = this.byKey.get(entry.key);
    if (statement !== undefined && statement.entry === entry) this.discard(statement);
  }

  private discard(statement: BackendStatement): void {
    this.last = null;
    this.byKey.delete(statement.entry.key);
    statement.entry.hosts.delete(this);
    if (!this.closeNow(statement.id)) this.closing.push(statement.id);
  }

  /** The backend dropped every statement (COM_RESET_CONNECTION) or the connection closed. */
  clear(): void {
    for (const statement of this.byKey.values()) statement.entry.hosts.delete(this);
    this.byKey.clear();
    this.last = null;
    this.closing.length = 0;
  }
}
