// Validation issues with key paths (`mysql_backends[1].address: expected host:port`).
import type { ZodIssue } from 'zod';

export interface ConfigIssue {
  /** Key path in the document, e.g. `mysql_backends[1].address`. */
  readonly path: string;
  readonly message: string;
}

/** Formats a path of keys and indexes the way users write TOML keys. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out === '' ? '(document)' : out;
}

export function formatIssue(issue: ConfigIssue): string {
  return `${issue.path}: ${issue.message}`;
}

/** Converts zod's issues; unknown keys become one issue per key at that key's own path. */
export function fromZodIssues(issues: readonly ZodIssue[]): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: formatPath([...issue.path, key]), message: 'unknown key' });
    } else {
      out.push({ path: formatPath(issue.path), message: issue.message });
    }
  }
  return out;
}
