// A real nats-server as deployed: TLS with a private CA and deploy/nats/authorization.conf (one
// user per service), its passwords in nats-server's environment as in compose and k8s.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBus, type Bus, type NatsAuth } from '@dbproxy/bus';
import { makeServerPki, startNats, type NatsServer, type ServerPki } from '@dbproxy/testing';

export const ROOT = join(__dirname, '..', '..', '..', '..');
export const SERVICES = ['config-api', 'topology', 'bgd-monitor', 'xa-coordinator', 'mysql-edge', 'pg-edge', 'redis-edge'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** The variable deploy/nats/authorization.conf reads a service's password from. */
export const passwordVariable = (service: string): string => `NATS_${service.toUpperCase().replaceAll('-', '_')}_PASSWORD`;

export interface SecureNats {
  readonly server: NatsServer;
  readonly pki: ServerPki;
  readonly passwords: Readonly<Record<ServiceName, string>>;
  /** A bus logged in as `service` over TLS (trusting the test CA). */
  bus(service: ServiceName, overrides?: { auth?: NatsAuth | null; ca?: string | null }): Bus;
}

export async function startSecureNats(dir: string): Promise<SecureNats> {
  const pki = makeServerPki(dir);
  // nats-server parses a variable's value as configuration: a password must start with a letter
  const passwords = Object.fromEntries(SERVICES.map((s) => [s, `p${randomBytes(12).toString('hex')}`])) as Record<ServiceName, string>;
  const text = `# the test's server: deploy/nats/nats-server.conf with the test CA's files
tls {
  cert_file: "${pki.server.cert}"
  key_file: "${pki.server.key}"
  ca_file: "${pki.ca}"
  timeout: 5
}
include ./authorization.conf
`;
  const server = await startNats({
    config: {
      text,
      files: { 'authorization.conf': readFileSync(join(ROOT, 'deploy', 'nats', 'authorization.conf'), 'utf8') },
      env: Object.fromEntries(SERVICES.map((s) => [passwordVariable(s), passwords[s]])),
    },
  });
  const bus = (service: ServiceName, overrides: { auth?: NatsAuth | null; ca?: string | null } = {}): Bus => {
    const auth = overrides.auth === undefined ? { kind: 'user' as const, user: service, password: passwords[service] } : overrides.auth;
    const ca = overrides.ca === undefined ? pki.ca : overrides.ca;
    return createBus({
      name: `test-${service}`,
      natsUrl: server.url,
      reconnectWaitMs: 200,
      connectTimeoutMs: 2000,
      ...(auth ? { auth } : {}),
      ...(ca ? { tls: { ca: readFileSync(ca, 'utf8') } } : {}),
    });
  };
  return { server, pki, passwords, bus };
}
