// Each [bus] authentication method against a real nats-server configured for it: user/password
// and an NKey user (one server), a token (another; nats-server takes a token alone), and a .creds
// file whose seed is that NKey user's (nats-server outside operator mode checks the NKey
// signature, not the JWT). Wrong secrets are refused with DBP_ERR_BUS_AUTH_REFUSED.
import { nkeys } from 'nats';
import { startNats, type NatsServer } from '@dbproxy/testing';
import { createBus, type Bus, type NatsAuth } from '../src/index';

jest.setTimeout(60_000);

const dec = new TextDecoder();
const user = nkeys.createUser();
const seed = dec.decode(user.getSeed());
const other = dec.decode(nkeys.createUser().getSeed());
const b64url = (data: Uint8Array | string) => Buffer.from(data).toString('base64url');
/** A user JWT signed with the user's own key: well-formed for nats.js's creds parser. */
function credsFile(userSeed: string): string {
  const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const claims = b64url(JSON.stringify({ sub: user.getPublicKey(), iss: user.getPublicKey(), nats: { type: 'user', version: 2 } }));
  const jwt = `${header}.${claims}.${b64url(user.sign(Buffer.from(`${header}.${claims}`)))}`;
  return `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${userSeed}\n------END USER NKEY SEED------\n`;
}

describe('NATS authentication methods', () => {
  let users: NatsServer;
  let tokens: NatsServer;
  const buses: Bus[] = [];
  const outcome = async (server: NatsServer, auth: NatsAuth): Promise<string> => {
    const bus = createBus({ name: 'auth-test', natsUrl: server.url, reconnectWaitMs: 200, auth });
    buses.push(bus);
    return bus.waitForConnection(10_000).then(
      () => 'connected',
      (err: unknown) => String((err as { code?: string }).code),
    );
  };

  beforeAll(async () => {
    users = await startNats({ jetstream: false, config: { text: `authorization { users = [ { user: "svc", password: "pw1" }, { nkey: "${user.getPublicKey()}" } ] }\n` } });
    tokens = await startNats({ jetstream: false, config: { text: 'authorization { token: "tk1" }\n' } });
  });
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await users?.destroy();
    await tokens?.destroy();
  });

  it('logs in with user/password, an NKey seed, a .creds file and a token', async () => {
    expect(await outcome(users, { kind: 'user', user: 'svc', password: 'pw1' })).toBe('connected');
    expect(await outcome(users, { kind: 'nkey', seed: `${seed}\n` })).toBe('connected');
    expect(await outcome(users, { kind: 'creds', creds: credsFile(seed) })).toBe('connected');
    expect(await outcome(tokens, { kind: 'token', token: 'tk1' })).toBe('connected');
  });

  it('is refused with DBP_ERR_BUS_AUTH_REFUSED for a wrong secret of each kind', async () => {
    expect(await outcome(users, { kind: 'user', user: 'svc', password: 'nope' })).toBe('DBP_ERR_BUS_AUTH_REFUSED');
    expect(await outcome(users, { kind: 'nkey', seed: other })).toBe('DBP_ERR_BUS_AUTH_REFUSED');
    expect(await outcome(users, { kind: 'creds', creds: credsFile(other) })).toBe('DBP_ERR_BUS_AUTH_REFUSED');
    expect(await outcome(tokens, { kind: 'token', token: 'nope' })).toBe('DBP_ERR_BUS_AUTH_REFUSED');
  });
});
