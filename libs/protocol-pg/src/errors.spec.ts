import { readFileSync } from 'node:fs';
import path from 'node:path';
import { registeredErrors } from '@dbproxy/util';
import { sqlStateForError } from './index';

const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
/** Rows of the README's Errors table: code → documented SQLSTATE. */
const documented = new Map([...readme.matchAll(/^\| `(DBP_ERR_PG_[A-Z0-9_]+)` \| ([0-9A-Z]{5}) \|/gm)].map((m) => [m[1], m[2]]));
const defined = [...registeredErrors().keys()].filter((code) => code.startsWith('DBP_ERR_PG_'));

describe('protocol-pg error registry', () => {
  it('documents every code it defines, and nothing else', () => {
    expect(defined.length).toBeGreaterThan(0);
    expect([...documented.keys()].sort()).toEqual([...defined].sort());
  });

  it('maps every code to the SQLSTATE the README documents', () => {
    for (const code of defined) expect([code, sqlStateForError(code)]).toEqual([code, documented.get(code)]);
  });
});
