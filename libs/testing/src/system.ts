// The machine's side: who we run as, where binaries are, and running setup commands that die with us.
import { spawn, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BinaryNotFound, CommandFailed } from './errors';

/** A local account to run a server as (PostgreSQL refuses to run as root). */
export interface SystemUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

const BIN_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Servers get a fixed environment instead of ours, so variables such as PGPORT, PGOPTIONS, TZ or
 * REDISCLI_AUTH in a developer's shell cannot change how a test server behaves.
 */
export const SERVER_ENV: NodeJS.ProcessEnv = { PATH: BIN_PATH, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'UTC', HOME: tmpdir() };

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** The account from /etc/passwd, or undefined when we are not root (then servers run as us). */
export function accountToRunAs(name: string): SystemUser | undefined {
  if (!isRoot()) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) throw BinaryNotFound(`system user ${name}`, '/etc/passwd');
  const [, , uid, gid] = line.split(':');
  return { name, uid: Number(uid), gid: Number(gid) };
}

/** The absolute path of `binary` on the fixed server PATH. */
export function findBinary(binary: string): string {
  const dirs = BIN_PATH.split(':');
  const found = dirs.map((dir) => join(dir, binary)).find((path) => existsSync(path));
  if (!found) throw BinaryNotFound(binary, BIN_PATH);
  return found;
}

/** The bin directory of the newest installed PostgreSQL (/usr/lib/postgresql/<major>/bin). */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)) : [];
  const newest = majors.sort((a, b) => Number(b) - Number(a)).find((v) => existsSync(join(root, v, 'bin', 'postgres')));
  if (!newest) throw BinaryNotFound('postgres', `${root}/<major>/bin`);
  return join(root, newest, 'bin');
}

/**
 * The argv that runs `command` through setpriv: as `runAs` when given, and with a parent-death
 * signal so the process dies with the test process even if that is SIGKILLed.
 */
export function diesWithUs(command: string, args: readonly string[], deathSignal: string, runAs?: SystemUser): string[] {
  const user = runAs ? ['--reuid', String(runAs.uid), '--regid', String(runAs.gid), '--clear-groups'] : [];
  return ['setpriv', ...user, '--pdeathsig', deathSignal, '--', command, ...args];
}

export interface CommandOptions {
  runAs?: SystemUser;
  cwd?: string;
  timeoutMs?: number;
}

const OUTPUT_LIMIT = 16_384;

/** Runs a short setup command to completion; rejects with DBP_ERR_TESTING_COMMAND_FAILED and its output. */
export function runCommand(command: string, args: readonly string[], options: CommandOptions = {}): Promise<string> {
  const [file, ...argv] = diesWithUs(command, args, 'KILL', options.runAs);
  const spawnOptions: SpawnOptions = { cwd: options.cwd ?? tmpdir(), env: SERVER_ENV, stdio: ['ignore', 'pipe', 'pipe'] };
  const label = [command, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, spawnOptions);
    let output = '';
    const collect = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(CommandFailed.withCause(err, label, err.message, output));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(CommandFailed(label, signal ? `killed by ${signal}` : `exit code ${code}`, output));
    });
  });
}

/** Copies a directory tree keeping owners and modes (a template data dir into an instance). */
export async function copyTree(from: string, to: string): Promise<void> {
  await runCommand('cp', ['-a', '--', from, to]);
}
