// Backend statements shared per connection: reference counts, closing when the last client
// statement goes (at once when idle, with the next command when busy), the bound per connection.
import { BackendStatements, StatementCatalog } from './statement-catalog';

function connection(bound: number, idle: () => boolean) {
  const closedNow: number[] = [];
  const statements = new BackendStatements(bound, (id) => {
    if (!idle()) return false;
    closedNow.push(id);
    return true;
  });
  return { statements, closedNow };
}

function acquire(catalog: StatementCatalog, text: string, schema: string | null = 'app', charsetKey = 'c45') {
  return catalog.acquire(Buffer.from(text, 'latin1'), schema, charsetKey);
}

describe('StatementCatalog and BackendStatements', () => {
  it('keeps statements of the same text apart when their database or character set differ', () => {
    const catalog = new StatementCatalog();
    const app = acquire(catalog, 'SELECT v FROM t');
    expect(acquire(catalog, 'SELECT v FROM t', 'other')).not.toBe(app);
    expect(acquire(catalog, 'SELECT v FROM t', null)).not.toBe(app);
    expect(acquire(catalog, 'SELECT v FROM t', 'app', 'c8')).not.toBe(app);
    expect(acquire(catalog, 'SELECT v FROM t', 'app', 'c45')).toBe(app);
    expect(catalog.size).toBe(4);
  });

  it('shares one backend statement per text, database and character set and closes it when the last client statement closes', () => {
    const catalog = new StatementCatalog();
    const a = acquire(catalog, 'SELECT ?');
    const b = acquire(catalog, 'SELECT ?');
    expect(a).toBe(b);
    const conn = connection(10, () => true);
    conn.statements.add(a, 7, 1);
    expect(conn.statements.get(a)?.id).toBe(7);
    catalog.release(a);
    expect(conn.closedNow).toEqual([]);
    catalog.release(b);
    expect(conn.closedNow).toEqual([7]);
    expect(conn.statements.size).toBe(0);
    expect(catalog.size).toBe(0);
  });

  it('queues the close for the next command when the connection is busy', () => {
    const catalog = new StatementCatalog();
    let idle = false;
    const conn = connection(10, () => idle);
    const e = acquire(catalog, 'SELECT 1');
    conn.statements.add(e, 3, 0);
    catalog.release(e);
    expect(conn.statements.closing).toEqual([3]);
    idle = true;
  });

  it('never answers for a text prepared again after it closed', () => {
    const catalog = new StatementCatalog();
    const conn = connection(10, () => false);
    const first = acquire(catalog, 'SELECT 2');
    conn.statements.add(first, 1, 0);
    catalog.release(first);
    const again = acquire(catalog, 'SELECT 2');
    expect(again).not.toBe(first);
    expect(conn.statements.get(again)).toBeUndefined();
  });

  it('keeps at most `bound` statements per connection, closing the oldest', () => {
    const catalog = new StatementCatalog();
    const conn = connection(2, () => true);
    for (let i = 1; i <= 3; i++) conn.statements.add(acquire(catalog, `SELECT ${i}`), i, 0);
    expect(conn.closedNow).toEqual([1]);
    expect(conn.statements.size).toBe(2);
  });

  it('forgets everything on clear (COM_RESET_CONNECTION), and closes nothing for it later', () => {
    const catalog = new StatementCatalog();
    const conn = connection(10, () => true);
    const e = acquire(catalog, 'SELECT 3');
    conn.statements.add(e, 9, 0);
    conn.statements.clear();
    catalog.release(e);
    expect(conn.closedNow).toEqual([]);
  });
});
