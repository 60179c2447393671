// Error codes are part of the interface: each is defined once (createError enforces it) and
// documented in its library's README.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { registeredErrors } from '@dbproxy/util';

const LIBS = join(__dirname, '..', '..', '..', 'libs');

describe('error codes', () => {
  it('are all documented in a library README', async () => {
    const libs = readdirSync(LIBS).filter((lib) => existsSync(join(LIBS, lib, 'src', 'index.ts')) && lib !== 'testing');
    for (const lib of libs) await import(`@dbproxy/${lib}`);
    const readmes = libs
      .map((lib) => join(LIBS, lib, 'README.md'))
      .filter(existsSync)
      .map((path) => readFileSync(path, 'utf8'))
      .join('\n');
    const codes = [...registeredErrors().keys()];
    expect(codes.length).toBeGreaterThan(20);
    const undocumented = codes.filter((code) => !readmes.includes(code));
    expect(undocumented).toEqual([]);
  });
});
