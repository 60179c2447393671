// The handshake collation of a client, replayed as SET NAMES on pooled connections.
import { CollationCatalog, collationKey } from './collations';

describe('CollationCatalog', () => {
  it('names a collation id for SET NAMES once loaded, utf8mb4 otherwise', () => {
    const catalog = new CollationCatalog();
    expect(catalog.loaded).toBe(false);
    expect(catalog.setNames(8)).toBe('SET NAMES utf8mb4');
    catalog.load([
      [Buffer.from('8'), Buffer.from('latin1'), Buffer.from('latin1_swedish_ci')],
      [Buffer.from('224'), Buffer.from('utf8mb4'), Buffer.from('utf8mb4_unicode_ci')],
      [null, null, null],
    ]);
    expect(catalog.loaded).toBe(true);
    expect(catalog.setNames(8)).toBe('SET NAMES latin1 COLLATE latin1_swedish_ci');
    expect(catalog.setNames(224)).toBe('SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci');
    expect(collationKey(224)).toBe('#224');
  });
});
