// Refuses configuration documents that carry literal secrets into the KV (every subscriber reads
// it): secrets travel as `${VAR}` placeholders each service expands from its own environment,
// unless the document sets [config_api] allow_literal_secrets = true (unsafe). A literal the KV
// already holds at the same key path (seeded from a service's --config file, say) is not new:
// changes that carry it over unchanged (a drain, a PUT of the GET'd document) are not refused.
import { literalSecretPaths, type ConfigIssue, type DbproxyConfig } from '@dbproxy/config';

/** The value at a key path such as `users[0].password`. */
function valueAt(doc: unknown, path: string): unknown {
  let node = doc;
  for (const part of path.split(/\.|(?=\[)/)) {
    if (node === null || typeof node !== 'object') return undefined;
    const index = /^\[(\d+)\]$/.exec(part);
    node = index ? (node as unknown[])[Number(index[1])] : (node as Record<string, unknown>)[part];
  }
  return node;
}

export function literalSecretIssues(document: unknown, config: DbproxyConfig, stored?: unknown): ConfigIssue[] {
  if (config.config_api.allow_literal_secrets) return [];
  return literalSecretPaths(document)
    .filter((path) => stored === undefined || valueAt(stored, path) !== valueAt(document, path))
    .map((path) => ({
      path,
      message: 'literal secret refused: the configuration KV is readable by every service; write a ${VAR} placeholder each service expands from its own environment (or set [config_api] allow_literal_secrets = true, unsafe)',
    }));
}
