// Unit tests of the /proc process tree reader.
import { spawn } from 'node:child_process';
import { waitFor } from './wait';
import { isAlive, processTree } from './process-tree';

describe('processTree', () => {
  it('lists a process and its children, and isAlive turns false once they are killed', async () => {
    const parent = spawn('/bin/sh', ['-c', 'sleep 30 & sleep 30 & wait'], { stdio: 'ignore' });
    const pid = parent.pid as number;
    const tree = await waitFor(() => {
      const found = processTree(pid);
      return found.length === 3 ? found : undefined;
    });
    expect(tree[0]).toBe(pid);
    expect(tree.every(isAlive)).toBe(true);
    tree.forEach((p) => process.kill(p, 'SIGKILL'));
    await waitFor(() => !tree.some(isAlive));
    expect(isAlive(pid)).toBe(false);
  });
});
