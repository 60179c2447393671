// A session's prepared statements: bounded in count and bytes, long data bounded too.
import { StatementCatalog } from '../backend/statement-catalog';
import { StatementRegistry } from './statement-registry';

const source = (sql: string) => ({ sql: Buffer.from(sql), schema: 'app', charsetKey: 'c45' });
const limits = { maxStatements: 2, maxBytes: 40 };

describe('StatementRegistry', () => {
  it('hands out ids and refuses statements beyond the count and byte bounds', () => {
    const catalog = new StatementCatalog();
    const r = new StatementRegistry(catalog);
    const a = r.reserve(10, limits) as number;
    r.add(a, source('SELECT 1'), 0, undefined as never, null);
    expect(r.reserve(50, limits)).toMatchObject({ code: 'DBP_ERR_MYSQLEDGE_STATEMENT_MEMORY' });
    const b = r.reserve(10, limits) as number;
    expect(b).not.toBe(a);
    r.add(b, source('SELECT 2'), 0, undefined as never, null);
    expect(r.reserve(1, limits)).toMatchObject({ code: 'DBP_ERR_MYSQLEDGE_TOO_MANY_STATEMENTS' });
    r.close(a);
    expect(typeof r.reserve(1, limits)).toBe('number');
    expect(catalog.size).toBe(1);
    r.clear();
    expect(catalog.size).toBe(0);
  });

  it('keeps long data until the execute, and remembers an overflow for it', () => {
    const r = new StatementRegistry(new StatementCatalog());
    const s = r.add(r.reserve(8, limits) as number, source('SELECT ?'), 1, undefined as never, null);
    r.appendLongData(s, 0, Buffer.alloc(10), 40);
    expect(s.longData?.length).toBe(1);
    expect(s.longDataParams?.has(0)).toBe(true);
    r.appendLongData(s, 0, Buffer.alloc(30), 40);
    expect(s.longDataError).toMatchObject({ code: 'DBP_ERR_MYSQLEDGE_STATEMENT_MEMORY' });
    expect(s.longData).toBeNull();
  });
});
