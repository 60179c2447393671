// Secret fields: redacted in API answers and logs, restored when a client sends the mask back.
import { isPlaceholder } from './env';

export const REDACTED = '********';

const SECRET_KEYS = new Set(['password', 'token', 'secret', 'client_key', 'nkey_seed']);

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key) || key.endsWith('_password') || key.endsWith('_secret') || key.endsWith('_token');
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
