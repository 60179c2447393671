// Runs redis-cli as a child process without blocking the event loop (the proxy under test shares it).
import { spawn } from 'node:child_process';

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function redisCli(port: number, args: readonly string[], input = ''): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(input);
  });
}
