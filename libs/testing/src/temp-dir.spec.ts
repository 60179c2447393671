// Unit tests of tmpDir.
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tmpDir } from './temp-dir';

describe('tmpDir', () => {
  it('creates a fresh dbproxy-test- directory under os.tmpdir() and removes it with its contents', async () => {
    const first = await tmpDir('spec');
    const second = await tmpDir('spec');
    expect(first.path).not.toBe(second.path);
    expect(first.path.startsWith(join(tmpdir(), 'dbproxy-test-spec-'))).toBe(true);
    expect(statSync(first.path).mode & 0o777).toBe(0o711);
    writeFileSync(join(first.path, 'file'), 'x');
    await first.remove();
    await second.remove();
    expect(existsSync(first.path)).toBe(false);
    expect(existsSync(second.path)).toBe(false);
    await first.remove();
  });
});
