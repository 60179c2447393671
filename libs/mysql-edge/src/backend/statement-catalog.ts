// Prepared statements on backend connections. A backend statement is keyed by its SQL text and
// shared by every session that prepared the same text (it holds no client data), so a hot
// statement is prepared once per pooled connection. The catalog counts the client statements
// open on each text; when the last one closes (COM_STMT_CLOSE or session end), every backend
// connection holding a copy closes it: at once when the connection is idle, else before its next
// command.

/** Where copies of a statement live (a backend connection's statement set). */
export interface StatementHost {
  drop(entry: CatalogEntry): void;
}

/** One SQL text prepared by at least one client session of this process. */
export interface CatalogEntry {
  readonly text: string;
  refs: number;
  /** Set when the last client statement on the text closed: backend copies must go. */
  closed: boolean;
  readonly hosts: Set<StatementHost>;
}

export class StatementCatalog {
  private readonly entries = new Map<string, CatalogEntry>();

  acquire(text: string): CatalogEntry {
    let entry = this.entries.get(text);
    if (entry === undefined) {
      entry = { text, refs: 0, closed: false, hosts: new Set() };
      this.entries.set(text, entry);
    }
    entry.refs++;
    return entry;
  }

  release(entry: CatalogEntry): void {
    if (entry.closed) return;
    entry.refs--;
    if (entry.refs > 0) return;
    entry.closed = true;
    this.entries.delete(entry.text);
    for (const host of entry.hosts) host.drop(entry);
    entry.hosts.clear();
  }

  /** Texts with at least one open client statement. */
  get size(): number {
    return this.entries.size;
  }
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
  private readonly byText = new Map<string, BackendStatement>();
  readonly closing: number[] = [];

  constructor(
    private readonly bound: number,
    private readonly closeNow: (id: number) => boolean,
  ) {}

  get size(): number {
    return this.byText.size;
  }

  get(entry: CatalogEntry): BackendStatement | undefined {
    const found = this.byText.get(entry.text);
    return found !== undefined && found.entry === entry ? found : undefined;
  }

  add(entry: CatalogEntry, id: number, paramCount: number): BackendStatement {
    const statement: BackendStatement = { id, paramCount, entry, types: null };
    const previous = this.byText.get(entry.text);
    if (previous !== undefined) this.discard(previous);
    this.byText.set(entry.text, statement);
    entry.hosts.add(this);
    if (this.byText.size > this.bound) this.discard(this.byText.values().next().value as BackendStatement);
    return statement;
  }

  /** The catalog closed `entry`: its copy here goes. */
  drop(entry: CatalogEntry): void {
    const statement = this.byText.get(entry.text);
    if (statement !== undefined && statement.entry === entry) this.discard(statement);
  }

  private discard(statement: BackendStatement): void {
    this.byText.delete(statement.entry.text);
    statement.entry.hosts.delete(this);
    if (!this.closeNow(statement.id)) this.closing.push(statement.id);
  }

  /** The backend dropped every statement (COM_RESET_CONNECTION) or the connection closed. */
  clear(): void {
    for (const statement of this.byText.values()) statement.entry.hosts.delete(this);
    this.byText.clear();
    this.closing.length = 0;
  }
}
