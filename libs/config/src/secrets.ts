// Secret fields: redacted in API answers and logs, restored when a client sends the mask back.
import { isPlaceholder } from './env';

export const REDACTED = '********';

const SECRET_KEYS = new Set(['password', 'token', 'secret', 'client_key', 'nkey_seed', 'seed', 'nkey', 'creds', 'credentials', 'private_key', 'key_pem']);

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key) || ['_password', '_secret', '_token', '_seed', '_private_key', '_key_pem', '_credentials'].some((suffix) => key.endsWith(suffix));
}

/** Key paths holding a literal secret: a non-empty string at a secret key that is not one `${VAR}` placeholder. */
export function literalSecretPaths(doc: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        const at = path === '' ? key : `${path}.${key}`;
        if (isSecretKey(key) && typeof child === 'string' && child !== '' && !isPlaceholder(child)) found.push(at);
        else walk(child, at);
      }
    }
  };
  walk(doc, '');
  return found;
}

/** A copy with every literal secret replaced by REDACTED; `${VAR}` placeholders are kept. */
export function redactSecrets<T>(doc: T): T {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        const secret = isSecretKey(key) && typeof child === 'string' && child !== '' && !isPlaceholder(child);
        out[key] = secret ? REDACTED : walk(child);
      }
      return out;
    }
    return node;
  };
  return walk(doc) as T;
}

/**
 * Where `incoming` holds REDACTED at a secret key, takes the value at the same path from
 * `current`, so a client can GET, edit and PUT a document without knowing its secrets.
 */
export function restoreRedacted(incoming: unknown, current: unknown): unknown {
  if (Array.isArray(incoming)) {
    const base = Array.isArray(current) ? current : [];
    return incoming.map((item, i) => restoreRedacted(item, base[i]));
  }
  if (incoming !== null && typeof incoming === 'object') {
    const base = current !== null && typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, unknown>) : {};
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(incoming)) {
      out[key] = isSecretKey(key) && child === REDACTED && typeof base[key] === 'string' ? base[key] : restoreRedacted(child, base[key]);
    }
    return out;
  }
  return incoming;
}

/** True when a serialized document still contains any of `secrets` (a test and log guard). */
export function containsSecret(text: string, secrets: readonly string[]): boolean {
  return secrets.some((s) => s.length > 0 && text.includes(s));
}
