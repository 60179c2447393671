// Statements prepared on one pooled backend connection for every client that uses it (PgBouncer
// 1.21's max_prepared_statements): keyed by query text and parameter types, named dbproxy_<n>
// (never reused on the connection), bounded with the least recently used closed first.
import { Buffer } from 'node:buffer';
import { encodeFrontendMessages } from '@dbproxy/protocol-pg';

/** The cache key of a statement: its parameter types and text (clients' own names play no part). */
export function statementKey(sql: string, paramTypes: readonly number[]): string {
  return paramTypes.length === 0 ? sql : `${paramTypes.join(',')}\0${sql}`;
}

export class BackendStatements {
  /** Key → backend name; the Map's order is the LRU order (oldest first). */
  private readonly byKey = new Map<string, string>();
  /** Backend statements forgotten here but perhaps still prepared there (an eviction's Close was skipped). */
  private orphans: string[] = [];
  private next = 0;

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.byKey.size;
  }

  /** The backend name of `key`, marked as just used; undefined when the connection does not hold it. */
  use(key: string): string | undefined {
    const name = this.byKey.get(key);
    if (name !== undefined) {
      this.byKey.delete(key);
      this.byKey.set(key, name);
    }
    return name;
  }

  /** A new backend name for `key`, and the backend statements to close first (the LRU one when full). */
  add(key: string): { readonly name: string; readonly close: readonly string[] } {
    const close = this.orphans;
    this.orphans = [];
    while (this.byKey.size >= this.limit) {
      const [oldest, name] = this.byKey.entries().next().value as [string, string];
      this.byKey.delete(oldest);
      close.push(name);
    }
    const name = `dbproxy_${++this.next}`;
    this.byKey.set(key, name);
    return { name, close };
  }

  /** The Parse of `name` failed or was skipped: the backend does not hold it. */
  forget(key: string, name: string): void {
    if (this.byKey.get(key) === name) this.byKey.delete(key);
  }

  /** A Close of `name` was skipped: it is closed with the next one. */
  orphan(name: string): void {
    this.orphans.push(name);
  }

  /** The backend dropped every prepared statement (DISCARD ALL, DEALLOCATE): nothing is held. */
  clear(): void {
    this.byKey.clear();
    this.orphans = [];
  }
}

export function closeStatement(name: string): Buffer {
  return encodeFrontendMessages({ type: 'Close', kind: 'S', name });
}

/**
 * The client's Bind `frame` re-addressed to the backend statement `name`: the portal and every
 * byte after the statement name are kept as they are (parameters are not decoded).
 */
export function bindTo(frame: Buffer, statementStart: number, statementEnd: number, name: string): Buffer {
  const nameBytes = Buffer.byteLength(name);
  const out = Buffer.allocUnsafe(frame.length - (statementEnd - statementStart) + nameBytes);
  frame.copy(out, 0, 0, statementStart);
  out.write(name, statementStart, 'utf8');
  frame.copy(out, statementStart + nameBytes, statementEnd);
  out.writeInt32BE(out.length - 1, 1);
  return out;
}
