import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkListenExposure, isLoopback, PUBLISHED_EXAMPLE_TOKENS } from './listen-guard';

const tokens = (token: string) => [{ name: 'admin', token, role: 'admin' as const }];
const api = (listen: string, token: string) => ({ listen, tokens: tokens(token), history_limit: 1, edge_heartbeat_ttl_seconds: 1, max_body_bytes: 1, edge_request_timeout_seconds: 1, action_log_limit: 1, allow_literal_secrets: false });

describe('config-api listen guard', () => {
  it('knows the token fallbacks the example file publishes', () => {
    const example = readFileSync(join(__dirname, '..', '..', '..', 'config', 'dbproxy.example.toml'), 'utf8');
    const published = [...example.matchAll(/token = "\$\{[A-Z_]+:-([^}]+)\}"/g)].map((m) => m[1]);
    expect([...PUBLISHED_EXAMPLE_TOKENS].sort()).toEqual(published.sort());
  });

  it('tells loopback from the rest', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost']) expect(isLoopback(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.1']) expect(isLoopback(h)).toBe(false);
  });

  it('refuses an example token beyond loopback only', () => {
    expect(() => checkListenExposure(api('0.0.0.0:8080', 'dev-admin-token-change-me'))).toThrow(/DBP_ERR_CONFIG_API_EXAMPLE_TOKEN_EXPOSED|will not listen on 0\.0\.0\.0:8080/);
    expect(() => checkListenExposure(api('127.0.0.1:8080', 'dev-admin-token-change-me'))).not.toThrow();
    expect(() => checkListenExposure(api('0.0.0.0:8080', 'a-real-secret-token-123'))).not.toThrow();
  });
});
