import { DbproxyError } from '@dbproxy/util';
import fc from 'fast-check';
import { saslprepPassword } from './saslprep';
import { deriveScramKeys, formatScramVerifier, hmac, parseScramVerifier, scramSecretFrom, scramVerifierFromPassword, xor } from './scram';
import { ScramClientSession } from './scram-client';
import { ScramServerSession } from './scram-server';

// RFC 7677 section 3.
const RFC = {
  password: 'pencil',
  clientNonce: 'rOprNGfwEbeRWgbNEkqO',
  clientFirst: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
  serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  clientFinal: 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
};
// What PostgreSQL 15 stored for `CREATE ROLE dbp_scram_probe PASSWORD 'pencil'`.
const VERIFIER_BY_POSTGRES =
  'SCRAM-SHA-256$4096:3qK2glfIxdSlTKzwztuaQQ==$eDGSFp/RSEeWcu2jfB7LIet7iLjIFO5azRbzi6eJENg=:kMcLIOCs97cCTicMC7LsyuG4bcWMECdHsob5eUdqRtw=';

/** A deterministic random source: counts up from `seed`. */
const counting = (seed: number) => (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (seed + i) & 0xff));

function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof DbproxyError) return err.code;
    throw err;
  }
  throw new Error('expected a typed error');
}

describe('SCRAM-SHA-256 client', () => {
  it('reproduces the RFC 7677 exchange', () => {
    const client = new ScramClientSession({ password: RFC.password, username: 'user', random: () => Buffer.from(RFC.clientNonce, 'base64') });
    expect(client.clientFirst().toString()).toBe(RFC.clientFirst);
    expect(client.clientFinal(Buffer.from(RFC.serverFirst)).toString()).toBe(RFC.clientFinal);
    expect(() => client.verifyServerFinal(Buffer.from(RFC.serverFinal))).not.toThrow();
  });

  it('rejects a server that does not know the password', () => {
    const client = new ScramClientSession({ password: RFC.password, username: 'user', random: () => Buffer.from(RFC.clientNonce, 'base64') });
    client.clientFirst();
    client.clientFinal(Buffer.from(RFC.serverFirst));
    expect(thrownCode(() => client.verifyServerFinal(Buffer.from('v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=')))).toBe('DBP_ERR_PG_SCRAM_SERVER_SIGNATURE');
  });

  it('rejects a server nonce that does not extend its own, an e= answer and absurd iteration counts', () => {
    const start = () => {
      const client = new ScramClientSession({ password: 'p', random: counting(1), maxIterations: 10_000 });
      const own = client.clientFirst().toString().split('r=')[1];
      return { client, own };
    };
    const a = start();
    expect(thrownCode(() => a.client.clientFinal(Buffer.from('r=someoneelse,s=AAAA,i=4096')))).toBe('DBP_ERR_PG_SCRAM_NONCE_MISMATCH');
    const b = start();
    expect(thrownCode(() => b.client.clientFinal(Buffer.from(`r=${b.own},s=AAAA,i=4096`)))).toBe('DBP_ERR_PG_SCRAM_NONCE_MISMATCH');
    const c = start();
    expect(thrownCode(() => c.client.clientFinal(Buffer.from(`r=${c.own}x,s=AAAA,i=99999`)))).toBe('DBP_ERR_PG_SCRAM_MALFORMED');
    const d = start();
    expect(thrownCode(() => d.client.clientFinal(Buffer.from(`r=${d.own}x,s=!!,i=4096`)))).toBe('DBP_ERR_PG_SCRAM_MALFORMED');
    const e = start();
    e.client.clientFinal(Buffer.from(`r=${e.own}x,s=AAAA,i=1`));
    expect(thrownCode(() => e.client.verifyServerFinal(Buffer.from('e=invalid-proof')))).toBe('DBP_ERR_PG_SCRAM_SERVER_ERROR');
  });

  it('only ever throws typed errors on arbitrary server messages (fuzz)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 }), (first, final) => {
        const client = new ScramClientSession({ password: 'p', random: counting(1), maxIterations: 16 });
        const own = client.clientFirst().toString().split('r=')[1];
        try {
          client.clientFinal(Buffer.from(first.startsWith('r=') ? first.replace('r=', `r=${own}`) : first));
          client.verifyServerFinal(Buffer.from(final));
        } catch (err) {
          expect(err).toBeInstanceOf(DbproxyError);
          expect((err as DbproxyError).code).toMatch(/^DBP_ERR_PG_/);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('picks SCRAM-SHA-256 and refuses servers that only offer channel binding', () => {
    expect(ScramClientSession.chooseMechanism(['SCRAM-SHA-256-PLUS', 'SCRAM-SHA-256'])).toBe('SCRAM-SHA-256');
    expect(thrownCode(() => ScramClientSession.chooseMechanism(['SCRAM-SHA-256-PLUS']))).toBe('DBP_ERR_PG_SCRAM_MECHANISM');
  });

  it('enforces the order of steps', () => {
    expect(thrownCode(() => new ScramClientSession({ password: 'p' }).clientFinal(Buffer.from('r=x')))).toBe('DBP_ERR_PG_SCRAM_STATE');
  });
});

describe('SCRAM-SHA-256 server', () => {
  const exchange = (serverPassword: string, clientPassword: string) => {
    const server = new ScramServerSession({ secret: scramSecretFrom(serverPassword, { random: counting(7) }), random: counting(50) });
    const client = new ScramClientSession({ password: clientPassword, random: counting(90) });
    const serverFirst = server.handleClientFirst('SCRAM-SHA-256', client.clientFirst());
    const result = server.handleClientFinal(client.clientFinal(serverFirst));
    return { client, result };
  };

  it('accepts the right password and proves itself to the client', () => {
    const { client, result } = exchange('correct horse', 'correct horse');
    if (!result.ok) throw new Error('expected success');
    expect(() => client.verifyServerFinal(result.serverFinal)).not.toThrow();
  });

  it('rejects a wrong password without throwing', () => {
    expect(exchange('correct horse', 'battery staple').result).toEqual({ ok: false });
  });

  it('verifies the RFC 7677 proof from the secret alone', () => {
    const secret = deriveScramKeys(RFC.password, Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'), 4096);
    const authMessage = `${RFC.clientFirst.slice(3)},${RFC.serverFirst},${RFC.clientFinal.slice(0, RFC.clientFinal.indexOf(',p='))}`;
    const proof = Buffer.from(RFC.clientFinal.slice(RFC.clientFinal.indexOf(',p=') + 3), 'base64');
    expect(xor(proof, hmac(secret.storedKey, authMessage))).toEqual(secret.clientKey);
    expect(`v=${hmac(secret.serverKey, authMessage).toString('base64')}`).toBe(RFC.serverFinal);
  });

  it('runs a mock exchange for unknown users that always fails', () => {
    const server = new ScramServerSession({ secret: null, random: counting(3) });
    const client = new ScramClientSession({ password: 'anything', random: counting(4) });
    const serverFirst = server.handleClientFirst('SCRAM-SHA-256', client.clientFirst());
    expect(serverFirst.toString()).toMatch(/^r=.+,s=.+,i=4096$/);
    expect(server.handleClientFinal(client.clientFinal(serverFirst))).toEqual({ ok: false });
  });

  it('gives an unknown user the same mock salt on every attempt when keyed', () => {
    const saltOf = (user: string, seed: number) => {
      const server = new ScramServerSession({ secret: null, random: counting(seed), mockSalt: { key: Buffer.from('cluster key'), user } });
      return server.handleClientFirst('SCRAM-SHA-256', Buffer.from('n,,n=,r=abc')).toString().split(',')[1];
    };
    expect(saltOf('mallory', 1)).toBe(saltOf('mallory', 2));
    expect(saltOf('mallory', 1)).not.toBe(saltOf('trudy', 1));
  });

  it('refuses channel binding cleanly, and authorization identities', () => {
    const server = () => new ScramServerSession({ secret: scramSecretFrom('x'), random: counting(1) });
    expect(thrownCode(() => server().handleClientFirst('SCRAM-SHA-256', Buffer.from('p=tls-server-end-point,,n=,r=abc')))).toBe('DBP_ERR_PG_SCRAM_CHANNEL_BINDING');
    expect(thrownCode(() => server().handleClientFirst('SCRAM-SHA-256', Buffer.from('n,a=admin,n=,r=abc')))).toBe('DBP_ERR_PG_SCRAM_MALFORMED');
    expect(thrownCode(() => server().handleClientFirst('SCRAM-SHA-256-PLUS', Buffer.from('n,,n=,r=abc')))).toBe('DBP_ERR_PG_SCRAM_MECHANISM');
    expect(server().handleClientFirst('SCRAM-SHA-256', Buffer.from('y,,n=,r=abc')).toString()).toMatch(/^r=abc/);
  });

  it('rejects a client-final with a foreign nonce or mismatched binding', () => {
    const start = () => {
      const server = new ScramServerSession({ secret: scramSecretFrom('x'), random: counting(1) });
      const nonce = server.handleClientFirst('SCRAM-SHA-256', Buffer.from('n,,n=,r=abc')).toString().split(',')[0].slice(2);
      return { server, nonce };
    };
    const proof = Buffer.alloc(32).toString('base64');
    const a = start();
    expect(thrownCode(() => a.server.handleClientFinal(Buffer.from(`c=biws,r=abc,p=${proof}`)))).toBe('DBP_ERR_PG_SCRAM_NONCE_MISMATCH');
    const b = start();
    expect(thrownCode(() => b.server.handleClientFinal(Buffer.from(`c=eSws,r=${b.nonce},p=${proof}`)))).toBe('DBP_ERR_PG_SCRAM_MALFORMED');
    const c = start();
    expect(thrownCode(() => c.server.handleClientFinal(Buffer.from(`c=biws,r=${c.nonce},p=AAAA`)))).toBe('DBP_ERR_PG_SCRAM_MALFORMED');
    const d = start();
    expect(thrownCode(() => d.server.handleClientFinal(Buffer.from(`c=biws,r=${d.nonce}`)))).toBe('DBP_ERR_PG_SCRAM_MALFORMED');
  });

  it('only ever throws typed errors on arbitrary client messages (fuzz)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 120 }), (first, final) => {
        const server = new ScramServerSession({ secret: scramSecretFrom('x', { iterations: 1 }), random: counting(1) });
        try {
          server.handleClientFirst('SCRAM-SHA-256', Buffer.from(first));
          server.handleClientFinal(Buffer.from(final));
        } catch (err) {
          expect(err).toBeInstanceOf(DbproxyError);
          expect((err as DbproxyError).code).toMatch(/^DBP_ERR_PG_/);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('SCRAM verifiers', () => {
  it('reads the verifier PostgreSQL stores and reproduces it from the password', () => {
    const secret = parseScramVerifier(VERIFIER_BY_POSTGRES);
    expect(secret.iterations).toBe(4096);
    const derived = deriveScramKeys('pencil', secret.salt, secret.iterations);
    expect(derived.storedKey).toEqual(secret.storedKey);
    expect(derived.serverKey).toEqual(secret.serverKey);
    expect(formatScramVerifier(secret)).toBe(VERIFIER_BY_POSTGRES);
    expect(scramVerifierFromPassword('pencil', { salt: secret.salt })).toBe(VERIFIER_BY_POSTGRES);
  });

  it('accepts a stored verifier or a plaintext password as the server secret', () => {
    expect(scramSecretFrom(VERIFIER_BY_POSTGRES)).toEqual(parseScramVerifier(VERIFIER_BY_POSTGRES));
    const fromPlain = scramSecretFrom('pencil', { random: counting(5), iterations: 16 });
    expect(fromPlain.iterations).toBe(16);
    expect(fromPlain.salt).toEqual(counting(5)(16));
  });

  it.each([
    'SCRAM-SHA-256$4096:c2FsdA==$short:short',
    'SCRAM-SHA-256$0:c2FsdA==$' + 'A'.repeat(43) + '=:' + 'A'.repeat(43) + '=',
    'SCRAM-SHA-1$4096:c2FsdA==$x:y',
    'md5557fea25190d37a5a8e0c0f4543cb04a',
    'SCRAM-SHA-256$4096:!!!$' + 'A'.repeat(43) + '=:' + 'A'.repeat(43) + '=',
  ])('rejects the malformed verifier %s', (verifier) => {
    expect(thrownCode(() => parseScramVerifier(verifier))).toBe('DBP_ERR_PG_SCRAM_VERIFIER');
  });
});

describe('SASLprep', () => {
  it.each([
    ['user', 'user'],
    ['I\u00ADX', 'IX'], // RFC 4013 example: soft hyphen maps to nothing
    ['\u00AA', 'a'], // NFKC
    ['\u2168', 'IX'], // NFKC
    ['a\u00A0b', 'a b'], // non-ASCII space maps to space
    ['\uFF21\uFF22\uFF23', 'ABC'],
    ['p\u00E4ssw\u00F6rd', 'p\u00E4ssw\u00F6rd'],
    ['\x07ascii', '\x07ascii'], // ASCII is never touched
    ['\u00E9\u0007', '\u00E9\u0007'], // prohibited control: the raw password is used
    ['\u0627\u0031', '\u0627\u0031'], // bidi rule broken: raw password
    ['\u0627\u0628', '\u0627\u0628'],
  ])('prepares %j as %j', (input, expected) => {
    expect(saslprepPassword(input)).toBe(expected);
  });
});
