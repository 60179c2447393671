// The error registry: every code documented, every wire errno a server code, one translator.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PoolErrors } from '@dbproxy/pool';
import { PacketTooLarge } from '@dbproxy/protocol-mysql';
import { MysqlEdgeErrors, toMysqlError } from './errors';

describe('mysql-edge errors', () => {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const codes = Object.values(MysqlEdgeErrors).map((e) => e.code);

  it('defines unique codes, each in the README Errors table', () => {
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(readme).toContain(`\`${code}\``);
  });

  it('translates every code to a server errno (never a 2xxx client code) with a five-character SQLSTATE', () => {
    for (const make of Object.values(MysqlEdgeErrors)) {
      const wire = toMysqlError((make as (...a: unknown[]) => Error)('a', 'b', 'c', 'd'));
      // only a bug (an illegal state transition) is the generic 1105
      if (make !== MysqlEdgeErrors.illegalTransition) expect(wire.code).not.toBe(1105);
      expect(wire.code < 2000 || wire.code >= 3000).toBe(true);
      expect(wire.sqlState).toMatch(/^[0-9A-Z]{5}$/);
    }
  });

  it('translates the libraries underneath and anything else', () => {
    expect(toMysqlError(PacketTooLarge(10, 5))).toMatchObject({ code: 1153, sqlState: '08S01' });
    expect(toMysqlError(PoolErrors.acquireTimeout('db', 5000))).toMatchObject({ code: 1040, sqlState: '08004' });
    expect(toMysqlError(MysqlEdgeErrors.readOnly('INSERT'))).toEqual({ code: 1290, sqlState: 'HY000', message: 'The read-only listener runs only reads a replica may serve, not INSERT; use the read-write listener' });
    expect(toMysqlError(new Error('boom'))).toEqual({ code: 1105, sqlState: 'HY000', message: 'dbproxy internal error: boom' });
  });
});
