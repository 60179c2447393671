// Every pg-edge error code is documented in the README with the SQLSTATE clients receive.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MalformedMessage, pgError } from '@dbproxy/protocol-pg';
import { BackendReportedError, INTERNAL_ERROR_MESSAGE, isInternalError, PgEdgeErrors, pgEdgeErrorCodes, sqlStateOf, toErrorResponse } from './errors';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');

describe('pg-edge errors', () => {
  it.each(pgEdgeErrorCodes())('%s is in the Errors table with its SQLSTATE', (code) => {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${code}\``));
    expect(row).toBeDefined();
    expect(row).toContain(`| ${sqlStateOf(code)} |`);
    expect(sqlStateOf(code)).not.toBe('XX000');
  });

  it('translates to an ErrorResponse carrying the SQLSTATE and the code', () => {
    expect(toErrorResponse(PgEdgeErrors.readOnly('INSERT'))).toMatchObject({
      type: 'ErrorResponse',
      severity: 'ERROR',
      code: '25006',
      message: 'cannot execute INSERT on the read-only listener',
      detail: 'DBP_ERR_PGEDGE_READ_ONLY',
    });
    expect(toErrorResponse(new Error('boom'), 'FATAL')).toMatchObject({ severity: 'FATAL', code: 'XX000' });
  });

  it('gives any exception that is not a dbproxy or backend error a fixed XX000 text, never its own', () => {
    const os = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED', address: '10.0.0.5' });
    const thrown: unknown[] = [new Error('boom at /srv/dbproxy/x.js'), new TypeError("Cannot read properties of undefined (reading 'connection')"), os, 'a string', undefined];
    for (const err of thrown) {
      expect(isInternalError(err)).toBe(true);
      const response = toErrorResponse(err);
      expect(response).toMatchObject({ severity: 'ERROR', code: 'XX000', message: INTERNAL_ERROR_MESSAGE });
      expect(response.detail).toBeUndefined();
    }
    expect(INTERNAL_ERROR_MESSAGE).toBe('internal error in the proxy (details in the edge log)');
  });

  it('keeps the text of dbproxy errors of other libraries and of the backend', () => {
    const codec = MalformedMessage('Bind', 'truncated');
    expect(isInternalError(codec)).toBe(false);
    expect(toErrorResponse(codec)).toMatchObject({ code: '08P01', message: codec.message, detail: 'DBP_ERR_PG_MALFORMED' });
    const backend = new BackendReportedError(pgError({ severity: 'ERROR', code: '42P01', message: 'relation "t" does not exist' }));
    expect(isInternalError(backend)).toBe(false);
    expect(toErrorResponse(backend, 'FATAL')).toMatchObject({ severity: 'FATAL', code: '42P01', message: 'relation "t" does not exist' });
    expect(toErrorResponse(PgEdgeErrors.protocol('expected a password message, got Query'), 'FATAL')).toMatchObject({
      code: '08P01',
      message: 'protocol violation: expected a password message, got Query',
    });
  });
});
