// The stock `mariadb` CLI against an edge configured as config/dbproxy.example.toml (only the
// addresses changed): its default (ssl=TRUE) and --ssl=0 / --skip-ssl logins work, every `mariadb`
// command of README.md runs verbatim (ports aside), and a caching_sha2_password account without
// frontend TLS answers a client that sends its password in clear with 1045, not 1043.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestRuntime, type TestRuntime } from '@dbproxy/runtime/testing';
import { freePort, startMariaDb } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { mysqlEdgeService } from '../src';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parse, stringify }: typeof import('smol-toml', { with: { 'resolution-mode': 'import' } }) = require('smol-toml');

jest.setTimeout(120_000);
const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');

type Table = Record<string, unknown>;

let db: Awaited<ReturnType<typeof startMariaDb>>;
let example: TestRuntime;
let rwPort: number;
let roPort: number;
let sha2: TestRuntime | undefined;

/** The example configuration with its listeners and backend moved to this test's ports and server. */
async function exampleConfig(edit: (doc: Table) => void = () => undefined): Promise<string> {
  const doc = parse(readFileSync(join(ROOT, 'config', 'dbproxy.example.toml'), 'utf8')) as Table;
  edit(doc);
  rwPort = await freePort();
  roPort = await freePort();
  const mysql = doc['mysql'] as Table;
  mysql['read_write_listen'] = `127.0.0.1:${rwPort}`;
  mysql['read_only_listen'] = `127.0.0.1:${roPort}`;
  (doc['proxy'] as Table)['admin'] = { listen: '127.0.0.1:0' };
  (doc['health'] as Table)['interval_seconds'] = 0.3;
  (doc['telemetry'] as Table)['log_level'] = 'warn';
  const backends = doc['mysql_backends'] as Table[];
  for (const backend of backends) backend['address'] = `${db.primary.host}:${db.primary.port}`;
  for (const section of ['postgres', 'redis']) (doc[section] as Table)['enabled'] = false;
  for (const key of ['postgres_backends', 'redis_backends', 'bgd_deployments']) delete doc[key];
  const redis = doc['redis'] as Table;
  if (redis['cluster']) (redis['cluster'] as Table)['enabled'] = false;
  return stringify(doc);
}

/** Runs the mariadb CLI with `args`; resolves with stdout and stderr, whatever its exit status. */
async function cli(args: readonly string[]): Promise<{ ok: boolean; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run('mariadb', [...args], { timeout: 20_000 });
    return { ok: true, out: stdout.trim(), err: stderr.trim() };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, out: String(e.stdout ?? '').trim(), err: String(e.stderr ?? '').trim() };
  }
}

/** The `mariadb ...` lines of README.md's code blocks, comments cut off. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  return blocks.flatMap((b) => b.split('\n')).filter((line) => line.startsWith('mariadb ')).map((line) => line.replace(/\s+#.*$/, ''));
}

/**
 * Runs `command` interactively on a pseudo-terminal (script(1)), as a person at a shell would: the
 * password at its prompt, then `sql` at the `MariaDB [...]>` prompt, then `exit`. Resolves with the
 * whole transcript.
 */
function interactive(command: string, password: string, sql: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let transcript = '';
    let step = 0;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not finish: ${transcript}`));
    }, 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      transcript += chunk.toString('utf8');
      if (step === 0 && transcript.includes('Enter password:')) child.stdin.write(`${password}\n`, () => void step++);
      else if (step === 1 && /\]> $/.test(transcript.trimEnd() + ' ')) child.stdin.write(`${sql}\nexit\n`, () => void step++);
    });
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(transcript);
    });
  });
}

const login = (port: number, user: string, password: string, ...tls: string[]) => ['-h', '127.0.0.1', '-P', String(port), '-u', user, `-p${password}`, '--batch', '--skip-column-names', ...tls, '-e', 'SELECT CONCAT(40 + 2)'];

beforeAll(async () => {
  db = await startMariaDb({ replicas: 0 });
  example = await startTestRuntime({ name: 'mysql-edge-example', services: [topologyService, mysqlEdgeService], config: await exampleConfig(), forgetTopologyOf: 'mysql' });
});

afterAll(async () => {
  await example?.stop();
  await sha2?.stop();
  await db?.destroy();
});

describe('the example configuration', () => {
  it.each([[[]], [['--ssl=0']], [['--skip-ssl']], [['--ssl']]])('lets the stock CLI log in as the example user (%j)', async (tls) => {
    const answer = await cli(login(rwPort, 'app', 'app-secret', ...tls));
    expect(answer).toMatchObject({ ok: true, out: '42' });
  });
});

describe('README.md', () => {
  it('shows mariadb commands that work verbatim against the example configuration (ports aside)', async () => {
    const commands = readmeCommands();
    expect(commands.length).toBeGreaterThanOrEqual(2);
    for (const command of commands) {
      const local = command.replace('-P 6033', `-P ${rwPort}`).replace('-P 6034', `-P ${roPort}`);
      expect(local).not.toBe(command);
      const transcript = await interactive(local, 'app-secret', 'SELECT 6 * 7 AS answer;');
      expect(transcript).toMatch(/\|\s+42 \|/);
      expect(transcript).not.toMatch(/ERROR \d+/);
    }
  });
});

describe('caching_sha2_password without frontend TLS', () => {
  beforeAll(async () => {
    await example.stop(); // one embedded bus per process: the next runtime must not follow this one's configuration
    const config = await exampleConfig((doc) => ((doc['users'] as Table[])[0] as Table)['mysql_auth_plugin'] = 'caching_sha2_password');
    sha2 = await startTestRuntime({ name: 'mysql-edge-example-sha2', services: [topologyService, mysqlEdgeService], config, forgetTopologyOf: 'mysql' });
  });

  it('answers a password sent in clear (the CLI with its default ssl=TRUE) with 1045 Access denied', async () => {
    const answer = await cli(login(rwPort, 'app', 'app-secret'));
    expect(answer.ok).toBe(false);
    expect(answer.err).toMatch(/ERROR 1045 \(28000\).*Access denied for user 'app'/);
    // the RSA key exchange (--ssl=0) still logs the same account in
    expect(await cli(login(rwPort, 'app', 'app-secret', '--ssl=0'))).toMatchObject({ ok: true, out: '42' });
  });
});
