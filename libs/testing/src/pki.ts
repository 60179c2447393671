// A private certificate authority for TLS tests (openssl): a CA, a server certificate for
// localhost/127.0.0.1 and a client certificate with a chosen common name.
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface TestPki {
  readonly dir: string;
  readonly ca: string;
  readonly server: { readonly cert: string; readonly key: string };
  readonly client: { readonly cert: string; readonly key: string };
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await promisify(execFile)('openssl', args, { cwd: dir, timeout: 30_000 }).catch((err: { stderr?: string }) => {
    throw new Error(`openssl ${args[0]} failed in ${dir}: ${err.stderr ?? String(err)}`);
  });
}

/** Writes ca.pem, server.pem/.key (SAN DNS:localhost, IP:127.0.0.1) and client.pem/.key into `dir`. */
export async function makeTestPki(dir: string, clientName: string): Promise<TestPki> {
  const p = (name: string) => join(dir, name);
  writeFileSync(p('server.ext'), 'subjectAltName = DNS:localhost, IP:127.0.0.1\n');
  await openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=dbproxy test CA', '-keyout', p('ca.key'), '-out', p('ca.pem')]);
  for (const [name, cn, ext] of [['server', 'localhost', true], ['client', clientName, false]] as const) {
    await openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`)]);
    await openssl(dir, ['x509', '-req', '-in', p(`${name}.csr`), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '2', '-out', p(`${name}.pem`), ...(ext ? ['-extfile', p('server.ext')] : [])]);
  }
  return { dir, ca: p('ca.pem'), server: { cert: p('server.pem'), key: p('server.key') }, client: { cert: p('client.pem'), key: p('client.key') } };
}

/** A CA, a server certificate for chosen names, and a second CA that signed nothing (servers such as nats-server). */
export interface ServerPki {
  readonly ca: string;
  readonly server: { readonly cert: string; readonly key: string };
  /** A second CA that signed nothing here: a client trusting it must refuse the server. */
  readonly otherCa: string;
}

function opensslSync(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Files in `dir`: ca.pem, server.pem/.key for `names` (DNS names and IPs), other-ca.pem. */
export function makeServerPki(dir: string, names: readonly string[] = ['localhost', '127.0.0.1']): ServerPki {
  const p = (name: string) => join(dir, name);
  const san = names.map((n) => (/^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(', ');
  writeFileSync(p('server.ext'), `subjectAltName = ${san}\n`);
  for (const ca of ['ca', 'other-ca']) opensslSync(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=dbproxy test ${ca}`, '-keyout', p(`${ca}.key`), '-out', p(`${ca}.pem`)]);
  opensslSync(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${names[0] ?? 'localhost'}`, '-keyout', p('server.key'), '-out', p('server.csr')]);
  opensslSync(['x509', '-req', '-in', p('server.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '2', '-out', p('server.pem'), '-extfile', p('server.ext')]);
  return { ca: p('ca.pem'), server: { cert: p('server.pem'), key: p('server.key') }, otherCa: p('other-ca.pem') };
}
