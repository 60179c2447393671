// A private CA and certificates signed by it (openssl), for TLS tests of servers and clients.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestPki {
  readonly ca: string;
  readonly server: { readonly cert: string; readonly key: string };
  /** A second CA that signed nothing here: a client trusting it must refuse the server. */
  readonly otherCa: string;
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Files in `dir`: ca.pem, server.pem/.key for `names` (DNS names and IPs), other-ca.pem. */
export function makeTestPki(dir: string, names: readonly string[] = ['localhost', '127.0.0.1']): TestPki {
  const p = (name: string) => join(dir, name);
  const san = names.map((n) => (/^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(', ');
  writeFileSync(p('server.ext'), `subjectAltName = ${san}\n`);
  for (const ca of ['ca', 'other-ca']) openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=dbproxy test ${ca}`, '-keyout', p(`${ca}.key`), '-out', p(`${ca}.pem`)]);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${names[0] ?? 'localhost'}`, '-keyout', p('server.key'), '-out', p('server.csr')]);
  openssl(['x509', '-req', '-in', p('server.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '2', '-out', p('server.pem'), '-extfile', p('server.ext')]);
  return { ca: p('ca.pem'), server: { cert: p('server.pem'), key: p('server.key') }, otherCa: p('other-ca.pem') };
}
