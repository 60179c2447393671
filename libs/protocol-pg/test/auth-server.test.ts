// (c) Server-side SCRAM-SHA-256 and md5 built on protocol-pg accept node-postgres and psql with the right
// password and refuse a wrong one with ErrorResponse 28P01.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Client, type DatabaseError } from 'pg';
import { MiniServer } from './support/mini-server';

jest.setTimeout(60_000);

const suffix = randomBytes(4).toString('hex');
let server: MiniServer;

/** Secrets as the real PostgreSQL stores them, read from pg_authid of a role we create and drop. */
async function storedSecret(encryption: 'scram-sha-256' | 'md5', role: string, password: string): Promise<string> {
  const admin = new Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`SET password_encryption = '${encryption}'`);
    await admin.query(`CREATE ROLE ${role} PASSWORD '${password}'`);
    const { rows } = await admin.query<{ rolpassword: string }>('SELECT rolpassword FROM pg_authid WHERE rolname = $1', [role]);
    return rows[0].rolpassword;
  } finally {
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.end();
  }
}

const bob = `dbp_bob_${suffix}`;
const carol = `dbp_carol_${suffix}`;

beforeAll(async () => {
  server = await MiniServer.start({
    alice: { method: 'scram-sha-256', secret: 'wonderland' },
    [bob]: { method: 'scram-sha-256', secret: await storedSecret('scram-sha-256', bob, 'builder') },
    [carol]: { method: 'md5', secret: await storedSecret('md5', carol, 'chess') },
    dave: { method: 'md5', secret: 'plain md5 secret' },
  });
});

afterAll(async () => {
  await server?.close();
});

async function pgLogin(user: string, password: string): Promise<string> {
  const client = new Client({ host: '127.0.0.1', port: server.port, user, password, database: 'app' });
  await client.connect();
  try {
    const { rows } = await client.query<{ user: string; sql: string }>('SELECT 1');
    return rows[0].user;
  } finally {
    await client.end();
  }
}

function psql(user: string, password: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const url = `postgresql://${user}:${encodeURIComponent(password)}@127.0.0.1:${server.port}/app?connect_timeout=10`;
  return new Promise((resolve) => {
    execFile('psql', ['-X', '-w', '-At', '-c', 'SELECT 1', url], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

describe('node-postgres against our server-side auth', () => {
  it.each([
    ['SCRAM from a plaintext password', 'alice', 'wonderland'],
    ['SCRAM from a verifier PostgreSQL stored', bob, 'builder'],
    ['md5 from a hash PostgreSQL stored', carol, 'chess'],
    ['md5 from a plaintext password', 'dave', 'plain md5 secret'],
  ])('accepts %s', async (_how, user, password) => {
    expect(await pgLogin(user, password)).toBe(user);
    expect(server.events).toContain(`authenticated ${user}`);
  });

  it.each([
    ['SCRAM', 'alice'],
    ['SCRAM with a stored verifier', bob],
    ['md5', carol],
    ['an unknown user (mock SCRAM)', 'mallory'],
  ])('refuses a wrong password for %s with 28P01', async (_how, user) => {
    const err = (await pgLogin(user, 'not the password').catch((e: unknown) => e)) as DatabaseError;
    expect(err.code).toBe('28P01');
    expect(err.severity).toBe('FATAL');
    expect(err.message).toBe(`password authentication failed for user "${user}"`);
  });
});

describe('psql against our server-side auth', () => {
  it('logs in with SCRAM after its SSLRequest is refused', async () => {
    const result = await psql('alice', 'wonderland');
    expect(result).toMatchObject({ code: 0, stdout: 'alice|SELECT 1\n' });
    expect(server.events).toContain('SSLRequest refused');
  });

  it('logs in with md5', async () => {
    expect(await psql(carol, 'chess')).toMatchObject({ code: 0, stdout: `${carol}|SELECT 1\n` });
  });

  it.each([['alice'], [carol]])('shows the server error and exits 2 for a wrong password (%s)', async (user) => {
    const result = await psql(user, 'wrong');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`password authentication failed for user "${user}"`);
  });
});
