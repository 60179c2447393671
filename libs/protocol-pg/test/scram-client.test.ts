// (b) Client-side SCRAM-SHA-256 and md5 against a real PostgreSQL that demands passwords
// (a throwaway cluster: the shared server trusts 127.0.0.1).
import { Client } from 'pg';
import { deriveScramKeys, parseScramVerifier, scramVerifierFromPassword } from '../src';
import { MiniClient, ServerError } from './support/mini-client';
import { startTempCluster, type TempCluster } from './support/temp-cluster';

jest.setTimeout(120_000);

let cluster: TempCluster;
let admin: Client;

const ROLES = {
  scram: { name: 'dbp_scram_user', password: 'correct horse battery staple' },
  md5: { name: 'dbp_md5_user', password: 'md5 is old' },
  unicode: { name: 'dbp_unicode_user', password: 'p\u00e4ssw\u00f6rd \u00aa\u00a0\u2168' },
  fullwidth: { name: 'dbp_fullwidth_user', password: '\uff21\uff22\uff23\uff11\uff12\uff13' },
};

beforeAll(async () => {
  cluster = await startTempCluster([`host all ${ROLES.md5.name} 127.0.0.1/32 md5`]);
  admin = new Client({ host: '127.0.0.1', port: cluster.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  for (const role of [ROLES.scram, ROLES.unicode, ROLES.fullwidth]) {
    await admin.query(`CREATE ROLE ${role.name} LOGIN PASSWORD '${role.password}'`);
  }
  await admin.query(`SET password_encryption = 'md5'`);
  await admin.query(`CREATE ROLE ${ROLES.md5.name} LOGIN PASSWORD '${ROLES.md5.password}'`);
});

afterAll(async () => {
  await admin?.end();
  cluster?.stop();
});

const connect = (user: string, password: string) => MiniClient.connect({ port: cluster.port, user, database: 'postgres', password });

describe('SCRAM-SHA-256 client against PostgreSQL', () => {
  it('authenticates with the right password and verifies the server signature', async () => {
    const client = await connect(ROLES.scram.name, ROLES.scram.password);
    expect(client.authRequests).toEqual(['AuthenticationSASL', 'AuthenticationSASLContinue', 'AuthenticationSASLFinal', 'AuthenticationOk']);
    const result = await client.simpleQuery('SELECT current_user');
    expect(result.rows[0][0]?.toString()).toBe(ROLES.scram.name);
    await client.close();
  });

  it('is refused with 28P01 for a wrong password', async () => {
    const err = await connect(ROLES.scram.name, 'wrong').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).response).toMatchObject({
      severity: 'FATAL',
      code: '28P01',
      message: `password authentication failed for user "${ROLES.scram.name}"`,
    });
  });

  it('prepares non-ASCII passwords with SASLprep exactly as the server did', async () => {
    const client = await connect(ROLES.unicode.name, ROLES.unicode.password);
    await client.close();
    // Fullwidth letters normalise (NFKC) to ASCII, so the ASCII spelling is the same password.
    await (await connect(ROLES.fullwidth.name, ROLES.fullwidth.password)).close();
    await (await connect(ROLES.fullwidth.name, 'ABC123')).close();
  });

  it('derives the same verifier the server stored', async () => {
    for (const role of [ROLES.scram, ROLES.unicode, ROLES.fullwidth]) {
      const { rows } = await admin.query<{ rolpassword: string }>('SELECT rolpassword FROM pg_authid WHERE rolname = $1', [role.name]);
      const stored = parseScramVerifier(rows[0].rolpassword);
      expect(scramVerifierFromPassword(role.password, { salt: stored.salt, iterations: stored.iterations })).toBe(rows[0].rolpassword);
      expect(deriveScramKeys(role.password, stored.salt, stored.iterations).storedKey).toEqual(stored.storedKey);
    }
  });
});

describe('md5 client against PostgreSQL', () => {
  it('authenticates with the right password and is refused with a wrong one', async () => {
    const client = await connect(ROLES.md5.name, ROLES.md5.password);
    expect(client.authRequests).toEqual(['AuthenticationMD5Password', 'AuthenticationOk']);
    await client.close();
    const err = await connect(ROLES.md5.name, 'nope').catch((e: unknown) => e);
    expect((err as ServerError).response.code).toBe('28P01');
  });
});
