// Every DBP_ERR_TESTING_ code is documented in the README Errors table.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { registeredErrors } from '@dbproxy/util';
import './index';

describe('libs/testing errors', () => {
  const defined = [...registeredErrors().keys()].filter((code) => code.startsWith('DBP_ERR_TESTING_'));
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const errorsSection = readme.slice(readme.indexOf('## Errors'));
  const documented = [...errorsSection.matchAll(/^\| `(DBP_ERR_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]);

  it('defines codes in the DBP_ERR_TESTING_ namespace', () => {
    expect(defined.length).toBeGreaterThan(0);
  });

  it('documents every code in the README Errors table, and nothing else', () => {
    expect([...documented].sort()).toEqual([...defined].sort());
    expect(new Set(documented).size).toBe(documented.length);
  });
});
