// Prepared statements on backend connections. A backend statement is keyed by its SQL text and
// shared by every session that prepared the same text (it holds no client data), so a hot
// statement is prepared once per pooled connection. The catalog counts the client statements
// open on each text; when the last one is closed (COM_STMT_CLOSE or session end), every backend
// connection closes its copy the next time it is used.

/** One SQL text prepared by at least one client session of this process. */
export interface CatalogEntry {
  readonly text: string;
  refs: number;
  /** Set when the last client statement on the text closed: backend copies must go. */
  closed: boolean;
}

export class StatementCatalog {
  private readonly entries = new Map<string, CatalogEntry>();
  /** Bumped whenever an entry closes, so connections know when to look for stale statements. */
  generation = 0;

  acquire(text: string): CatalogEntry {
    let entry = this.entries.get(text);
    if (entry === undefined) {
      entry = { text, refs: 0, closed: false };
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
    this.generation++;
  }

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

/** The statements one backend connection holds, bounded; evicted and stale ones are closed lazily. */
export class BackendStatements {
  private readonly byText = new Map<string, BackendStatement>();
  private seenGeneration = 0;
  /** Backend statement ids to close with the next command (COM_STMT_CLOSE has no response). */
  readonly closing: number[] = [];

  constructor(private readonly bound: number) {}

  get size(): number {
    return this.byText.size;
  }

  /** The live backend statement for `entry`, or undefined (a stale copy is queued for closing). */
  get(entry: CatalogEntry): BackendStatement | undefined {
    const found = this.byText.get(entry.text);
    if (found === undefined || found.entry === entry) return found;
    this.byText.delete(entry.text);
    this.closing.push(found.id);
    return undefined;
  }

  add(entry: CatalogEntry, id: number, paramCount: number): BackendStatement {
    const statement: BackendStatement = { id, paramCount, entry, types: null };
    const previous = this.byText.get(entry.text);
    if (previous !== undefined) this.closing.push(previous.id);
    this.byText.set(entry.text, statement);
    if (this.byText.size > this.bound) {
      const [text, oldest] = this.byText.entries().next().value as [string, BackendStatement];
      this.byText.delete(text);
      this.closing.push(oldest.id);
    }
    return statement;
  }

  /** Queues copies of statements no client holds any more (only when the catalog changed). */
  sweep(catalog: StatementCatalog): void {
    if (this.seenGeneration === catalog.generation) return;
    this.seenGeneration = catalog.generation;
    for (const [text, statement] of this.byText) {
      if (!statement.entry.closed) continue;
      this.byText.delete(text);
      this.closing.push(statement.id);
    }
  }

  /** The backend dropped every statement (COM_RESET_CONNECTION). */
  clear(): void {
    this.byText.clear();
    this.closing.length = 0;
  }
}
