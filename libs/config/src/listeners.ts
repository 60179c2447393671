// Every address the configuration asks a process to listen on, and the rule that no two collide.
import type { ConfigIssue } from './issues';
import type { DbproxyConfig } from './schema/root';

export interface ListenerAddress {
  readonly path: string;
  readonly address: string;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '*', '']);

function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}

/** Listeners of enabled sections plus every admin and API listener. */
export function configuredListeners(c: DbproxyConfig): ListenerAddress[] {
  const out: ListenerAddress[] = [];
  const add = (path: string, address: string) => out.push({ path, address });
  if (c.mysql.enabled) {
    add('mysql.read_write_listen', c.mysql.read_write_listen);
    add('mysql.read_only_listen', c.mysql.read_only_listen);
  }
  if (c.postgres.enabled) {
    add('postgres.read_write_listen', c.postgres.read_write_listen);
    add('postgres.read_only_listen', c.postgres.read_only_listen);
  }
  if (c.redis.enabled) {
    add('redis.read_write_listen', c.redis.read_write_listen);
    add('redis.read_only_listen', c.redis.read_only_listen);
  }
  add('config_api.listen', c.config_api.listen);
  for (const [key, address] of Object.entries(c.proxy.admin)) {
    if (typeof address === 'string') add(`proxy.admin.${key}`, address);
  }
  return out;
}

/** Two listeners collide on the same port when their hosts match or either is a wildcard. */
export function checkListeners(c: DbproxyConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const listeners = configuredListeners(c);
  listeners.forEach((a, i) => {
    const { host, port } = splitAddress(a.address);
    if (port === 0) return;
    for (const b of listeners.slice(0, i)) {
      const other = splitAddress(b.address);
      if (other.port !== port) continue;
      if (other.host === host || WILDCARDS.has(host) || WILDCARDS.has(other.host)) {
        issues.push({ path: a.path, message: `listens on ${a.address}, which ${b.path} (${b.address}) already uses` });
        break;
      }
    }
  });
  return issues;
}
