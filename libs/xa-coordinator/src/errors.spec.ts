// Every error code this library defines is unique (createError enforces it) and documented in README.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { registeredErrors } from '@dbproxy/util';
import './errors';

describe('xa-coordinator errors', () => {
  it('lists every DBP_ERR_XA_* code in the README Errors table, and nothing else', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Errors'));
    const documented = [...table.matchAll(/^\| `(DBP_ERR_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]).sort();
    const defined = [...registeredErrors().keys()].filter((code) => code.startsWith('DBP_ERR_XA_')).sort();
    expect(defined.length).toBeGreaterThan(0);
    expect(documented).toEqual(defined);
  });
});
