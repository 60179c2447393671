// A private certificate authority for TLS tests (openssl): a CA, a server certificate for
// localhost/127.0.0.1 and a client certificate with a chosen common name.
import { execFile } from 'node:child_process';
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
