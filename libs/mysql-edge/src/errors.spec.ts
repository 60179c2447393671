// The error registry: every code documented, every wire errno a server code, one translator.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '@dbproxy/observability';
import { PoolErrors } from '@dbproxy/pool';
import { PacketTooLarge } from '@dbproxy/protocol-mysql';
import { MysqlEdgeErrors, reportInternal, toMysqlError } from './errors';

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
      if (make !== MysqlEdgeErrors.illegalTransition && make !== MysqlEdgeErrors.internal) expect(wire.code).not.toBe(1105);
      expect(wire.code < 2000 || wire.code >= 3000).toBe(true);
      expect(wire.sqlState).toMatch(/^[0-9A-Z]{5}$/);
    }
  });

  it('translates the libraries underneath and anything else', () => {
    expect(toMysqlError(PacketTooLarge(10, 5))).toMatchObject({ code: 1153, sqlState: '08S01' });
    expect(toMysqlError(PoolErrors.acquireTimeout('db', 5000))).toMatchObject({ code: 1040, sqlState: '08004' });
    expect(toMysqlError(MysqlEdgeErrors.readOnly('INSERT'))).toEqual({ code: 1290, sqlState: 'HY000', message: 'The read-only listener runs only reads a replica may serve, not INSERT; use the read-write listener' });
    // a connect failure's OS error and the backend's address are for the log, not the client
    const unavailable = { code: 1429, sqlState: 'HY000', message: 'Cannot connect to backend db1: it is unavailable (details in the edge log)' };
    const refused = MysqlEdgeErrors.backendConnect('db1', 'connect ECONNREFUSED 10.0.0.5:3306');
    expect(refused.message).toContain('10.0.0.5:3306');
    expect(toMysqlError(refused)).toEqual(unavailable);
    expect(toMysqlError(PoolErrors.createFailed.withCause(refused, 'db1', refused.message))).toEqual(unavailable);
    // an exception's text never reaches a client
    expect(toMysqlError(new TypeError("Cannot read properties of null (reading 'alive')"))).toEqual({ code: 1105, sqlState: 'HY000', message: 'dbproxy internal error (details in the edge log)' });
  });

  it('logs an exception that is not an edge error under an incident id, which is all the client sees', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', service: 'mysql-edge', instance: 'spec', destination: { write: (line: string) => void lines.push(line) } });
    const wire = toMysqlError(reportInternal(new TypeError('secret detail'), logger, { session: 7 }));
    expect(wire.code).toBe(1105);
    expect(wire.message).not.toContain('secret');
    const logged = lines.map((line) => JSON.parse(line) as { session: number; incident: string; err: { message: string; stack: string } });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ session: 7, incident: expect.stringMatching(/^[0-9a-f]{8}$/), err: { message: 'secret detail' } });
    expect(wire.message).toBe(`dbproxy internal error (incident ${logged[0]?.incident} in the edge log)`);
    const own = MysqlEdgeErrors.readOnly('INSERT');
    expect(reportInternal(own, logger, {})).toBe(own);
  });
});
