// ./bin/dbproxy as users run it: validate's exit codes and messages, and the all-in-one launcher.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { startDbproxy } from '@dbproxy/runtime/testing';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..', '..');
const EXAMPLE = join(ROOT, 'config', 'dbproxy.example.toml');

function dbproxy(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [join(ROOT, 'bin', 'dbproxy'), ...args], { cwd: ROOT, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', ...env } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('dbproxy validate', () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await tmpDir('cli');
  });
  afterAll(() => dir.remove());

  it('exits 0 on the example configuration and prints a summary', () => {
    const { code, stdout } = dbproxy(['validate', '--config', EXAMPLE]);
    expect(code).toBe(0);
    expect(stdout).toContain('valid');
    expect(stdout).toMatch(/mysql: enabled, 1 backend\(s\) in 1 shard\(s\)/);
  });

  it('exits 2 naming an unset variable, a duplicate backend and a shard without a primary', () => {
    const path = join(dir.path, 'bad.toml');
    writeFileSync(
      path,
      `[[mysql_backends]]\nname = "db"\naddress = "10.0.0.1:3306"\nrole = "primary"\npassword = "\${DBPROXY_CLI_TEST_UNSET}"\n` +
        `[[mysql_backends]]\nname = "db"\naddress = "10.0.0.2:3306"\nrole = "replica"\n` +
        `[[mysql_backends]]\nname = "orphan"\naddress = "10.0.0.3:3306"\nrole = "replica"\nshard = "s1"\n`,
    );
    const { code, stderr } = dbproxy(['validate', '--config', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('3 problem(s)');
    expect(stderr).toContain('mysql_backends[0].password: environment variable DBPROXY_CLI_TEST_UNSET is not set');
    expect(stderr).toContain('mysql_backends[1].name: duplicate backend name "db" (also mysql_backends[0])');
    expect(stderr).toContain('mysql_backends[2].shard: shard "s1" has no primary');
  });

  it('accepts a sharding rule over shards with backends and exits 2 naming the key of a shard without any', () => {
    const path = join(dir.path, 'sharded.toml');
    const rule = (shards: string) =>
      `[[mysql_backends]]\nname = "db"\naddress = "10.0.0.1:3306"\nrole = "primary"\n` +
      `[[mysql.sharding.rules]]\ntable = "orders"\ncolumn = "customer_id"\nmap = { kind = "hash", shards = ${shards} }\n`;
    writeFileSync(path, rule('["default"]'));
    expect(dbproxy(['validate', '--config', path]).code).toBe(0);
    writeFileSync(path, rule('["default", "s1"]'));
    const { code, stdout, stderr } = dbproxy(['validate', '--config', path]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('mysql.sharding.rules[0].map.shards: shard "s1" has no backends in mysql_backends');
  });

  it('expands variables from the environment', () => {
    const path = join(dir.path, 'env.toml');
    writeFileSync(path, `[[mysql_backends]]\nname = "db"\naddress = "\${DB_HOST}:3306"\nrole = "primary"\n`);
    expect(dbproxy(['validate', '--config', path], { DB_HOST: 'db.internal' }).code).toBe(0);
    expect(dbproxy(['validate', '--config', path]).stderr).toContain('mysql_backends[0].address: environment variable DB_HOST is not set');
  });

  it('exits 2 with usage for a missing --config, an unknown command or an unknown service', () => {
    expect(dbproxy(['validate']).code).toBe(2);
    expect(dbproxy(['frobnicate', '--config', EXAMPLE]).stderr).toContain('unknown command frobnicate');
    const unknown = dbproxy(['start', 'nope-edge', '--config', EXAMPLE]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown service(s) nope-edge');
  });

  it('reports an unreadable file', () => {
    const { code, stderr } = dbproxy(['validate', '--config', join(dir.path, 'missing.toml')]);
    expect(code).toBe(2);
    expect(stderr).toContain('cannot read configuration file');
  });
});

describe('dbproxy start (all in one, embedded bus)', () => {
  it('runs every service in one process on the example configuration and drains on SIGTERM', async () => {
    const dir = await tmpDir('all-in-one');
    const [api, admin] = [await freePort(), await freePort()];
    // The example configuration with this test's own ports.
    const toml = readFileSync(EXAMPLE, 'utf8')
      .replace('listen = "127.0.0.1:9090"', `listen = "127.0.0.1:${admin}"`)
      .replace('listen = "127.0.0.1:8080"', `listen = "127.0.0.1:${api}"`);
    const path = join(dir.path, 'dbproxy.toml');
    writeFileSync(path, toml);
    const proc = startDbproxy(['start', '--config', path]);
    try {
      const ready = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${admin}/readyz`);
        return res.status === 200 ? ((await res.json()) as { components: Record<string, unknown> }) : false;
      }, { timeoutMs: 20_000, description: 'all-in-one readiness' }).catch((err) => {
        throw new Error(`${String(err)}\n${proc.output()}`);
      });
      expect(Object.keys(ready.components)).toEqual(expect.arrayContaining(['bus', 'config-api/api']));
      const res = await fetch(`http://127.0.0.1:${api}/v1/config`, { headers: { authorization: 'Bearer dev-viewer-token-change-me' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ epoch: 1 });
      expect(await proc.stop('SIGTERM')).toBe(0);
    } finally {
      await proc.stop('SIGKILL');
      await dir.remove();
    }
  });
});

describe('dbproxy usage, version and closed pipes', () => {
  it('prints the usage to stderr and exits 2 when run bare; --help prints it to stdout', () => {
    const bare = dbproxy([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^usage:\n {2}dbproxy start/);
    expect(bare.stderr).toContain('dbproxy drain BACKEND');
    const help = dbproxy(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(`${bare.stderr}`);
  });

  it('prints the version', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(dbproxy(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('ends quietly, exit 0, when stdout is a pipe closed early (| head -1, | true)', () => {
    const shell = (line: string) => spawnSync('bash', ['-c', `set -o pipefail; ${line}`], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: `${process.execPath.replace(/\/node$/, '')}:/usr/bin:/bin` } });
    const head = shell('./bin/dbproxy validate --config config/dbproxy.example.toml | head -1');
    expect({ code: head.status, stdout: head.stdout, stderr: head.stderr }).toEqual({ code: 0, stdout: 'config/dbproxy.example.toml: valid\n', stderr: '' });
    // `true` exits before dbproxy writes: every write meets EPIPE
    for (let i = 0; i < 3; i++) {
      const gone = shell('./bin/dbproxy validate --config config/dbproxy.example.toml | true');
      expect({ code: gone.status, stderr: gone.stderr }).toEqual({ code: 0, stderr: '' });
    }
  });
});
