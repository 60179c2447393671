// Refuses configuration documents that carry literal secrets into the KV (every subscriber reads
// it): secrets travel as `${VAR}` placeholders each service expands from its own environment,
// unless the document sets [config_api] allow_literal_secrets = true (unsafe).
import { literalSecretPaths, type ConfigIssue, type DbproxyConfig } from '@dbproxy/config';

export function literalSecretIssues(document: unknown, config: DbproxyConfig): ConfigIssue[] {
  if (config.config_api.allow_literal_secrets) return [];
  return literalSecretPaths(document).map((path) => ({
    path,
    message: 'literal secret refused: the configuration KV is readable by every service; write a ${VAR} placeholder each service expands from its own environment (or set [config_api] allow_literal_secrets = true, unsafe)',
  }));
}
