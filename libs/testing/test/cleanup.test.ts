// A test process that dies without cleaning up (SIGKILL) leaves no servers, files or shared memory behind.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../src/process-tree';
import { waitFor } from '../src';

jest.setTimeout(120_000);

interface Report {
  pids: number[];
  dirs: string[];
  shmid: string;
}

/** Starts the fixture in its own Node process and resolves with what it started. */
function startOrphaningProcess(): Promise<{ pid: number; report: Report }> {
  const fixture = join(__dirname, 'fixtures');
  const args = [join(fixture, 'run-ts.js'), join(fixture, 'orphaned-servers.ts')];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve({ pid: child.pid as number, report: JSON.parse(out) as Report });
    });
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}: ${err}`)));
  });
}

function sharedMemoryIds(): string[] {
  return readFileSync('/proc/sysvipc/shm', 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/)[1]).filter(Boolean);
}

describe('cleanup when the test process is killed', () => {
  it('kills its servers, frees PostgreSQL shared memory and deletes its directories', async () => {
    const { pid, report } = await startOrphaningProcess();
    expect(report.pids.every(isAlive)).toBe(true);
    expect(report.dirs.every((dir) => existsSync(dir))).toBe(true);
    expect(sharedMemoryIds()).toContain(report.shmid);

    process.kill(pid, 'SIGKILL');

    await waitFor(() => !report.pids.some(isAlive), { timeoutMs: 15_000, description: 'servers to die with their parent' });
    await waitFor(() => !sharedMemoryIds().includes(report.shmid), { timeoutMs: 15_000, description: 'shared memory to be freed' });
    await waitFor(() => !report.dirs.some((dir) => existsSync(dir)), { timeoutMs: 15_000, description: 'directories to be deleted' });
  });
});
