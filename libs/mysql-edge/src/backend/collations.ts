// The server's collations by id, read once per process from the first backend connection, so the
// character set a client chose in its handshake can be replayed on pooled connections as SET NAMES.
import { Collation } from '@dbproxy/protocol-mysql';

export const COLLATIONS_QUERY = 'SELECT id, character_set_name, collation_name FROM information_schema.collations';

/** Collation the edge's own backend connections start with (and COM_RESET_CONNECTION returns to). */
export const BACKEND_COLLATION: number = Collation.utf8mb4_general_ci;

export class CollationCatalog {
  private readonly byId = new Map<number, { charset: string; collation: string }>();
  private statements = new Map<number, string>();

  get loaded(): boolean {
    return this.byId.size > 0;
  }

  /** Rows of COLLATIONS_QUERY: [id, character_set_name, collation_name]. */
  load(rows: readonly (readonly (Buffer | null)[])[]): void {
    for (const [id, charset, collation] of rows) {
      if (!id || !charset || !collation) continue;
      this.byId.set(Number(id.toString('latin1')), { charset: charset.toString('utf8'), collation: collation.toString('utf8') });
    }
    this.statements = new Map();
  }

  /** The statement that puts a connection in collation `id` (SET NAMES utf8mb4 when unknown). */
  setNames(id: number): string {
    let sql = this.statements.get(id);
    if (sql === undefined) {
      const known = this.byId.get(id);
      sql = known ? `SET NAMES ${known.charset} COLLATE ${known.collation}` : 'SET NAMES utf8mb4';
      this.statements.set(id, sql);
    }
    return sql;
  }
}

/** The key of a session's character-set state: its handshake collation, or the SET NAMES text it ran. */
export function collationKey(id: number): string {
  return `#${id}`;
}
