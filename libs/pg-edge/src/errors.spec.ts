// Every pg-edge error code is documented in the README with the SQLSTATE clients receive.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PgEdgeErrors, pgEdgeErrorCodes, sqlStateOf, toErrorResponse } from './errors';

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
});
