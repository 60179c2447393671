// Starts a throwaway PostgreSQL 15 cluster (initdb as the postgres OS user) on a free port, with password auth.
import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const BIN = '/usr/lib/postgresql/15/bin';

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function asPostgres(command: string, args: string[]): string {
  return execFileSync('runuser', ['-u', 'postgres', '--', path.join(BIN, command), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface TempCluster {
  readonly port: number;
  readonly dir: string;
  stop(): void;
}

/**
 * `hba` lines go before a final `host all all 127.0.0.1/32 scram-sha-256`; the superuser
 * `postgres` is trusted on 127.0.0.1 so tests can create roles.
 */
export async function startTempCluster(hba: string[]): Promise<TempCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'dbp-protocol-pg-'));
  const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
  chownSync(dir, uid, gid);
  const data = path.join(dir, 'data');
  const port = await freePort();
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  appendFileSync(
    path.join(data, 'postgresql.conf'),
    `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\npassword_encryption = 'scram-sha-256'\nfsync = off\n`,
  );
  writeFileSync(
    path.join(data, 'pg_hba.conf'),
    ['local all all trust', 'host all postgres 127.0.0.1/32 trust', ...hba, 'host all all 127.0.0.1/32 scram-sha-256', ''].join('\n'),
  );
  asPostgres('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '60', 'start']);
  return {
    port,
    dir,
    stop() {
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
