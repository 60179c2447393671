// Turns [bus] into the bus's connection options: reads the secret and TLS files (a file that
// cannot be read stops the start with its key path), and names what an `insecure` link exposes.
import { readFileSync } from 'node:fs';
import type { CreateBusOptions, NatsAuth, NatsTls } from '@dbproxy/bus';
import { openBusExposures, type BusConfig } from '@dbproxy/config';
import { errorMessage } from '@dbproxy/util';

/** A [bus] file could not be read: start-up stops (exit 1) naming the key. */
export class BusFileUnreadable extends Error {
  constructor(key: string, path: string, cause: unknown) {
    super(`bus.${key}: cannot read ${path}: ${errorMessage(cause)}`);
  }
}

function readSetting(key: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new BusFileUnreadable(key, path, err);
  }
}

/** The secret from its inline key (already `${ENV}`-expanded) or its `_file` key, trailing newline removed. */
const SECRET_FILES = { password: 'password_file', token: 'token_file', nkey_seed: 'nkey_seed_file' } as const;

function secretOf(bus: BusConfig, inline: keyof typeof SECRET_FILES): string | undefined {
  const value = bus[inline];
  if (value !== undefined) return value;
  const fileKey = SECRET_FILES[inline];
  const file = bus[fileKey];
  return file === undefined ? undefined : readSetting(fileKey, file).replace(/\r?\n$/, '');
}

function busAuth(bus: BusConfig): NatsAuth | undefined {
  if (bus.user !== undefined) return { kind: 'user', user: bus.user, password: secretOf(bus, 'password') ?? '' };
  const token = secretOf(bus, 'token');
  if (token !== undefined) return { kind: 'token', token };
  const seed = secretOf(bus, 'nkey_seed');
  if (seed !== undefined) return { kind: 'nkey', seed };
  if (bus.creds_file !== undefined) return { kind: 'creds', creds: readSetting('creds_file', bus.creds_file) };
  return undefined;
}

function busTls(bus: BusConfig): NatsTls | undefined {
  const { tls } = bus;
  if (!tls.enabled) return undefined;
  return {
    ...(tls.ca_file ? { ca: readSetting('tls.ca_file', tls.ca_file) } : {}),
    ...(tls.cert_file ? { cert: readSetting('tls.cert_file', tls.cert_file) } : {}),
    ...(tls.key_file ? { key: readSetting('tls.key_file', tls.key_file) } : {}),
    ...(tls.server_name ? { serverName: tls.server_name } : {}),
  };
}

/** Connection options of the process's bus; none of the secrets it holds is ever logged. */
export function busConnectOptions(bus: BusConfig): Pick<CreateBusOptions, 'natsUrl' | 'auth' | 'tls' | 'connectTimeoutMs'> {
  if (!bus.nats_url) return { connectTimeoutMs: bus.connect_timeout_seconds * 1000 };
  const auth = busAuth(bus);
  const tls = busTls(bus);
  return { natsUrl: bus.nats_url, connectTimeoutMs: bus.connect_timeout_seconds * 1000, ...(auth ? { auth } : {}), ...(tls ? { tls } : {}) };
}

/** What `bus.insecure = true` lets through (to log at start); empty when nothing is exposed. */
export function insecureBusWarnings(bus: BusConfig): string[] {
  return bus.insecure ? openBusExposures(bus) : [];
}
