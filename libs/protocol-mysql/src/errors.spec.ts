import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DbproxyError, type ErrorDefinition } from '@dbproxy/util';
import * as errors from './errors';

const definitions = Object.values(errors) as ErrorDefinition<unknown[]>[];

describe('protocol-mysql error registry', () => {
  it('defines unique DBP_ERR_MYSQL_* codes', () => {
    const codes = definitions.map((d) => d.code);
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^DBP_ERR_MYSQL_[A-Z0-9_]+$/);
  });

  it('documents every code in the README Errors table, and nothing else', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Errors'), readme.indexOf('## Gaps'));
    const documented = [...table.matchAll(/^\| `(DBP_ERR_[A-Z0-9_]+)`/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(definitions.map((d) => d.code).sort());
  });

  it('makes DbproxyErrors with formatted messages', () => {
    const err = errors.PacketTooLarge(100, 10);
    expect(err).toBeInstanceOf(DbproxyError);
    expect(err.message).toBe('MySQL packet of 100 bytes exceeds the maximum of 10 bytes');
    expect(errors.PacketTooLarge.is(err)).toBe(true);
  });
});
