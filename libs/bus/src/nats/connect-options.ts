// Credentials and TLS of a NATS connection (nats.js options), and which connection failures
// are the configuration's fault (refused credentials, TLS) rather than an outage.
import { credsAuthenticator, ErrorCode, nkeyAuthenticator, type ConnectionOptions, type NatsError } from 'nats';

/** How a bus authenticates to NATS; secrets already read (from `${ENV}` or their files). */
export type NatsAuth =
  | { readonly kind: 'user'; readonly user: string; readonly password: string }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'nkey'; readonly seed: string }
  | { readonly kind: 'creds'; readonly creds: string };

/** TLS to NATS, PEM contents; the server certificate is always verified. */
export interface NatsTls {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  /** Name expected in the server certificate, when it differs from the URL's host. */
  readonly serverName?: string;
}

export function securityOptions(auth: NatsAuth | undefined, tls: NatsTls | undefined): Partial<ConnectionOptions> {
  const enc = new TextEncoder();
  const out: Partial<ConnectionOptions> = {};
  if (auth?.kind === 'user') Object.assign(out, { user: auth.user, pass: auth.password });
  else if (auth?.kind === 'token') out.token = auth.token;
  else if (auth?.kind === 'nkey') out.authenticator = nkeyAuthenticator(enc.encode(auth.seed.trim()));
  else if (auth?.kind === 'creds') out.authenticator = credsAuthenticator(enc.encode(auth.creds));
  if (tls) {
    // nats.js passes these to tls.connect; rejectUnauthorized stays true (its default).
    out.tls = { ...(tls.ca ? { ca: tls.ca } : {}), ...(tls.cert ? { cert: tls.cert } : {}), ...(tls.key ? { key: tls.key } : {}), ...(tls.serverName ? { servername: tls.serverName } : {}) } as ConnectionOptions['tls'];
  }
  return out;
}

const AUTH_CODES: readonly string[] = [ErrorCode.AuthorizationViolation, ErrorCode.AuthenticationExpired, ErrorCode.AuthenticationTimeout, ErrorCode.BadAuthentication, ErrorCode.BadCreds, ErrorCode.AccountExpired];
/** Node's certificate verification failures (tls.connect), e.g. an unknown CA or a wrong name. */
const TLS_NODE_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL_)/;

export type ConnectFailureKind = 'auth' | 'tls';

/** 'auth' or 'tls' for a failure that retrying cannot fix; undefined for an outage. */
export function classifyConnectFailure(err: unknown): ConnectFailureKind | undefined {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e && typeof e === 'object' && !seen.has(e); e = (e as { chainedError?: unknown; cause?: unknown }).chainedError ?? (e as { cause?: unknown }).cause) {
    seen.add(e);
    const code = String((e as NatsError).code ?? '');
    if (AUTH_CODES.includes(code)) return 'auth';
    if (code === ErrorCode.Tls || TLS_NODE_CODES.test(code)) return 'tls';
    // the server requires TLS and we have none, or we require it and the server offers none
    if (code === ErrorCode.ServerOptionNotAvailable && /tls/i.test((e as Error).message)) return 'tls';
  }
  return undefined;
}

/** The failure's own words, down its cause chain (nats.js wraps node's TLS errors). */
export function describeConnectFailure(err: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  for (let e: unknown = err; e && typeof e === 'object' && !seen.has(e); e = (e as { chainedError?: unknown }).chainedError ?? (e as { cause?: unknown }).cause) {
    seen.add(e);
    const message = (e as Error).message;
    if (message && !parts.includes(message)) parts.push(message);
  }
  return parts.join(': ') || String(err);
}
