import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DbproxyError, registeredErrors } from '@dbproxy/util';
import * as resp from './index';

const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const errorsTable = readme.slice(readme.indexOf('## Errors'), readme.indexOf('## Tests'));
const ours = [...registeredErrors()].filter(([code]) => code.startsWith('DBP_ERR_RESP_'));

describe('resp error codes', () => {
  it('exports one definition per code', () => {
    const exported = Object.values(resp).filter((v): v is typeof resp.InvalidBulkLength => typeof v === 'function' && 'code' in v && 'template' in v);
    expect(exported.map((e) => e.code).sort()).toEqual(ours.map(([code]) => code).sort());
    expect(exported.every((e) => e() instanceof DbproxyError)).toBe(true);
  });

  it('documents every code with its message template in the README Errors table', () => {
    for (const [code, template] of ours) expect(errorsTable).toContain(`| \`${code}\` | ${template.replace(/\|/g, '\\|')} |`);
    const documented = errorsTable.match(/DBP_ERR_RESP_[A-Z_]+/g) ?? [];
    expect([...new Set(documented)].sort()).toEqual(ours.map(([code]) => code).sort());
  });
});
