// Rules of [bus]: one authentication method with its secret given once, TLS files in pairs, no
// credentials inside nats_url, and no open link to a NATS that is not on this machine.
import type { ConfigIssue } from './issues';
import type { BusConfig, DbproxyConfig } from './schema/root';

/** The authentication method [bus] configures, or undefined for none. */
export type BusAuthMethod = 'user' | 'token' | 'nkey' | 'creds';

const METHOD_KEYS: Readonly<Record<BusAuthMethod, readonly (keyof BusConfig)[]>> = {
  user: ['user', 'password', 'password_file'],
  token: ['token', 'token_file'],
  nkey: ['nkey_seed', 'nkey_seed_file'],
  creds: ['creds_file'],
};

export function busAuthMethod(bus: BusConfig): BusAuthMethod | undefined {
  return (Object.keys(METHOD_KEYS) as BusAuthMethod[]).find((m) => METHOD_KEYS[m].some((k) => bus[k] !== undefined));
}

/** Hosts of a `nats_url` list (`nats://h:p`, `tls://h:p` or `h:p`, comma separated). */
export function natsUrlHosts(natsUrl: string): { host: string; userinfo: boolean }[] {
  return natsUrl
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((entry) => {
      const withScheme = /^[a-z]+:\/\//i.test(entry) ? entry : `nats://${entry}`;
      try {
        const url = new URL(withScheme);
        return { host: url.hostname.replace(/^\[|\]$/g, ''), userinfo: url.username !== '' || url.password !== '' };
      } catch {
        return { host: entry, userinfo: false };
      }
    });
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * What is unprotected about the link to NATS: empty when every server is on loopback, or TLS and
 * credentials are both configured. `bus.insecure = true` accepts these (with a warning at start).
 */
export function openBusExposures(bus: BusConfig): string[] {
  if (!bus.nats_url) return [];
  const remote = natsUrlHosts(bus.nats_url).filter((h) => !isLoopbackHost(h.host)).map((h) => h.host);
  if (remote.length === 0) return [];
  const missing = [...(bus.tls.enabled ? [] : ['no TLS ([bus.tls] enabled = true)']), ...(busAuthMethod(bus) ? [] : ['no credentials (user/password, token, nkey_seed or creds_file)'])];
  return missing.length === 0 ? [] : [`NATS at ${remote.join(', ')} is not on this machine and the link has ${missing.join(' and ')}`];
}

function checkAuth(bus: BusConfig, issues: ConfigIssue[]): void {
  const methods = (Object.keys(METHOD_KEYS) as BusAuthMethod[]).filter((m) => METHOD_KEYS[m].some((k) => bus[k] !== undefined));
  if (methods.length > 1) issues.push({ path: 'bus', message: `set one NATS authentication method, not ${methods.map((m) => METHOD_KEYS[m][0]).join(' and ')}` });
  const pairs = [
    ['password', 'password_file'],
    ['token', 'token_file'],
    ['nkey_seed', 'nkey_seed_file'],
  ] as const;
  for (const [inline, file] of pairs) {
    if (bus[inline] !== undefined && bus[file] !== undefined) issues.push({ path: `bus.${file}`, message: `set ${inline} or ${file}, not both` });
  }
  const hasPassword = bus.password !== undefined || bus.password_file !== undefined;
  if (bus.user !== undefined && !hasPassword) issues.push({ path: 'bus.user', message: 'needs password or password_file' });
  if (bus.user === undefined && hasPassword) issues.push({ path: bus.password !== undefined ? 'bus.password' : 'bus.password_file', message: 'needs user' });
}

function checkTls(bus: BusConfig, issues: ConfigIssue[]): void {
  const { tls } = bus;
  if ((tls.cert_file === undefined) !== (tls.key_file === undefined)) issues.push({ path: tls.cert_file === undefined ? 'bus.tls.key_file' : 'bus.tls.cert_file', message: 'cert_file and key_file go together (the client certificate and its key)' });
  const set = (['ca_file', 'cert_file', 'key_file', 'server_name'] as const).filter((k) => tls[k] !== undefined);
  if (!tls.enabled && set.length > 0) issues.push({ path: `bus.tls.${set[0]}`, message: 'has no effect unless [bus.tls] enabled = true' });
  if (tls.enabled && !bus.nats_url) issues.push({ path: 'bus.tls.enabled', message: 'TLS needs nats_url (the embedded bus has no network link)' });
}

export function checkBus(c: DbproxyConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const { bus } = c;
  checkAuth(bus, issues);
  checkTls(bus, issues);
  if (busAuthMethod(bus) && !bus.nats_url) issues.push({ path: 'bus', message: 'NATS credentials need nats_url (the embedded bus has no network link)' });
  if (bus.nats_url) {
    for (const h of natsUrlHosts(bus.nats_url)) {
      if (h.userinfo) issues.push({ path: 'bus.nats_url', message: `credentials in the URL of ${h.host} would be logged: use bus.user and bus.password` });
    }
  }
  if (!bus.insecure) {
    for (const exposure of openBusExposures(bus)) issues.push({ path: 'bus.nats_url', message: `${exposure}; configure both, or set bus.insecure = true to accept it` });
  }
  return issues;
}
