// config-api refuses to serve the whole network with a token anyone can read: the tokens
// published in config/dbproxy.example.toml are fine on a loopback address (a laptop), never
// beyond it.
import type { ConfigApiConfig, DeepReadonly } from '@dbproxy/config';
import { splitListen } from '@dbproxy/runtime';
import { createError } from '@dbproxy/util';

/** The token values config/dbproxy.example.toml falls back to when DBPROXY_*_TOKEN is unset. */
export const PUBLISHED_EXAMPLE_TOKENS: readonly string[] = ['dev-admin-token-change-me', 'dev-viewer-token-change-me'];

export const ConfigApiListenErrors = {
  exampleTokenExposed: createError<[string, string]>(
    'DBP_ERR_CONFIG_API_EXAMPLE_TOKEN_EXPOSED',
    'config-api will not listen on %s (not a loopback address) with the example token of [[config_api.tokens]] "%s", published in config/dbproxy.example.toml: set a secret token (e.g. DBPROXY_ADMIN_TOKEN / DBPROXY_VIEWER_TOKEN) or listen on 127.0.0.1',
  ),
} as const;

/** 127.0.0.0/8, ::1 and localhost; `0.0.0.0`, `::` and every other address reach beyond the host. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || /^::ffff:127\./.test(h);
}

/** Throws when `api.listen` is not loopback and a configured token is one the example file publishes. */
export function checkListenExposure(api: DeepReadonly<ConfigApiConfig>): void {
  if (isLoopback(splitListen(api.listen).host)) return;
  const exposed = api.tokens.find((t) => PUBLISHED_EXAMPLE_TOKENS.includes(t.token));
  if (exposed) throw ConfigApiListenErrors.exampleTokenExposed(api.listen, exposed.name);
}
