// `${VAR}` expansion in string values; an unset variable is an error naming it and its key.
import { formatPath, type ConfigIssue } from './issues';

const PLACEHOLDER = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Environment = Readonly<Record<string, string | undefined>>;

/** True when the whole string is one `${VAR}` placeholder (safe to show: it names, not holds, a secret). */
export function isPlaceholder(value: string): boolean {
  return /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/.test(value);
}

function expandString(value: string, env: Environment, path: readonly (string | number)[], issues: ConfigIssue[]): string {
  return value.replace(PLACEHOLDER, (match, name: string | undefined, fallback: string | undefined) => {
    if (name === undefined) return '${'; // `$${` escapes a literal `${`
    const found = env[name];
    if (found !== undefined) return found;
    if (fallback !== undefined) return fallback;
    issues.push({ path: formatPath(path), message: `environment variable ${name} is not set` });
    return match;
  });
}

/** Returns a copy of `doc` with every `${VAR}` replaced, plus one issue per unset variable. */
export function expandEnvironment(doc: unknown, env: Environment): { value: unknown; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const walk = (node: unknown, path: (string | number)[]): unknown => {
    if (typeof node === 'string') return expandString(node, env, path, issues);
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...path, i]));
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) out[key] = walk(child, [...path, key]);
      return out;
    }
    return node;
  };
  return { value: walk(doc, []), issues };
}
