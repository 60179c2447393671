// What a new client's login needs from its edge process and configuration epoch: the accounts,
// TLS and RSA material, and the server identity the greeting advertises.
import type { EdgeContext } from '../edge-context';
import type { EdgeEpoch } from '../epoch';
import type { LoginSettings } from './client-login';

/** Advertised before any backend greeting was seen: MariaDB-like, so clients avoid what MariaDB rejects (mysql2's JSON parameter type). */
export const FALLBACK_SERVER_VERSION = '10.11.0-MariaDB-dbproxy';

export function loginSettings(edge: EdgeContext, epoch: EdgeEpoch, remoteHost: string | undefined): LoginSettings {
  return {
    serverVersion: epoch.config.mysql.server_version ?? FALLBACK_SERVER_VERSION,
    accounts: epoch.accounts,
    tls: edge.tls,
    rsa: edge.rsa,
    sha2Cache: edge.sha2Cache,
    remoteHost: remoteHost ?? 'unknown',
    logger: edge.logger,
  };
}
