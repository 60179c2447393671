// Runs ./bin/dbproxy as a real child process for end-to-end tests, with its output captured.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processEnvironment } from '@dbproxy/config';
import { waitFor } from '@dbproxy/testing';

const ROOT = join(__dirname, '..', '..', '..', '..');

export interface DbproxyProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

export function writeConfig(dir: string, name: string, toml: string): string {
  const path = join(dir, name);
  writeFileSync(path, toml);
  return path;
}

/** `env` is added to this process's environment (e.g. one service's NATS credentials). */
export function startDbproxy(args: readonly string[], env?: Readonly<Record<string, string>>): DbproxyProcess {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'dbproxy'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env: { ...processEnvironment(), ...env } } : {}) });
  let text = '';
  child.stdout?.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (text += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => text,
    exited,
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Waits until GET `url` answers `status`; returns the parsed body. */
export async function waitForHttp(url: string, status = 200, timeoutMs = 20_000): Promise<unknown> {
  return waitFor(
    async () => {
      const res = await fetch(url);
      return res.status === status ? ((await res.json()) as unknown) : false;
    },
    { timeoutMs, intervalMs: 100, description: `${url} → ${status}` },
  );
}
