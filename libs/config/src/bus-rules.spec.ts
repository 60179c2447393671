import { parseToml, redactSecrets, REDACTED, validateDocument, type ConfigIssue } from './index';

function issuesOf(bus: string, env: Record<string, string> = {}): ConfigIssue[] {
  const parsed = parseToml(`[bus]\n${bus}\n`);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const result = validateDocument(parsed.document, env);
  return result.ok ? [] : result.issues;
}

const TLS = '[bus.tls]\nenabled = true\nca_file = "/etc/nats/ca.pem"';

describe('[bus] rules', () => {
  it('accepts loopback NATS without TLS or credentials, and the embedded bus', () => {
    expect(issuesOf('nats_url = "nats://127.0.0.1:4222, nats://localhost:4223,[::1]:4224"')).toEqual([]);
    expect(issuesOf('')).toEqual([]);
  });

  it('refuses a non-loopback NATS without TLS or without credentials, naming what is missing', () => {
    const open = issuesOf('nats_url = "nats://nats:4222"');
    expect(open).toEqual([{ path: 'bus.nats_url', message: expect.stringMatching(/NATS at nats is not on this machine.*no TLS.*and no credentials.*insecure = true/) }]);
    const list = issuesOf('nats_url = "nats://127.0.0.1:4222,nats://10.0.0.5:4222"\nuser = "a"\npassword = "b"');
    expect(list).toEqual([{ path: 'bus.nats_url', message: expect.stringMatching(/10\.0\.0\.5.*no TLS/) }]);
    expect(issuesOf(`nats_url = "tls://nats:4222"\n${TLS}`)).toEqual([{ path: 'bus.nats_url', message: expect.stringMatching(/no credentials/) }]);
  });

  it('accepts a remote NATS with TLS and credentials, or with insecure = true', () => {
    expect(issuesOf(`nats_url = "nats://nats:4222"\nuser = "topology"\npassword = "\${P}"\n${TLS}`, { P: 'x' })).toEqual([]);
    expect(issuesOf(`nats_url = "nats://nats:4222"\ntoken_file = "/run/t"\n${TLS}`)).toEqual([]);
    expect(issuesOf(`nats_url = "nats://nats:4222"\nnkey_seed_file = "/run/s"\n${TLS}`)).toEqual([]);
    expect(issuesOf(`nats_url = "nats://nats:4222"\ncreds_file = "/run/c.creds"\n${TLS}`)).toEqual([]);
    expect(issuesOf('nats_url = "nats://nats:4222"\ninsecure = true')).toEqual([]);
  });

  it('wants exactly one authentication method, each secret once, user with password', () => {
    const both = issuesOf('nats_url = "nats://127.0.0.1:4222"\nuser = "a"\npassword = "b"\ntoken = "t"');
    expect(both).toEqual([{ path: 'bus', message: 'set one NATS authentication method, not user and token' }]);
    expect(issuesOf('nats_url = "nats://127.0.0.1:4222"\ntoken = "t"\ntoken_file = "/f"')).toEqual([{ path: 'bus.token_file', message: 'set token or token_file, not both' }]);
    expect(issuesOf('nats_url = "nats://127.0.0.1:4222"\nuser = "a"')).toEqual([{ path: 'bus.user', message: 'needs password or password_file' }]);
    expect(issuesOf('nats_url = "nats://127.0.0.1:4222"\npassword_file = "/f"')).toEqual([{ path: 'bus.password_file', message: 'needs user' }]);
    expect(issuesOf('user = "a"\npassword = "b"')).toEqual([{ path: 'bus', message: expect.stringMatching(/need nats_url/) }]);
  });

  it('refuses credentials inside the URL, TLS halves and TLS files without enabled', () => {
    expect(issuesOf('nats_url = "nats://u:p@127.0.0.1:4222"')).toEqual([{ path: 'bus.nats_url', message: expect.stringMatching(/credentials in the URL .* bus.user and bus.password/) }]);
    expect(issuesOf('nats_url = "nats://127.0.0.1:4222"\n[bus.tls]\nenabled = true\ncert_file = "/c"')).toEqual([{ path: 'bus.tls.cert_file', message: expect.stringMatching(/go together/) }]);
    expect(issuesOf('nats_url = "nats://127.0.0.1:4222"\n[bus.tls]\nca_file = "/c"')).toEqual([{ path: 'bus.tls.ca_file', message: 'has no effect unless [bus.tls] enabled = true' }]);
  });

  it('names an unset variable behind a secret', () => {
    expect(issuesOf('nats_url = "nats://127.0.0.1:4222"\nuser = "a"\npassword = "${NATS_PASSWORD}"')).toEqual([{ path: 'bus.password', message: 'environment variable NATS_PASSWORD is not set' }]);
  });
});

describe('[bus] secrets in API answers', () => {
  it('masks the password, token and NKey seed; file paths and ${VAR} placeholders stay visible', () => {
    const doc = { bus: { user: 'pg-edge', password: 'pw', token: 'tk', nkey_seed: 'SUAX', password_file: '/run/secrets/p', creds_file: '/run/c.creds' } };
    expect(redactSecrets(doc)).toEqual({ bus: { user: 'pg-edge', password: REDACTED, token: REDACTED, nkey_seed: REDACTED, password_file: '/run/secrets/p', creds_file: '/run/c.creds' } });
    expect(redactSecrets({ bus: { password: '${NATS_PASSWORD}' } })).toEqual({ bus: { password: '${NATS_PASSWORD}' } });
  });
});
