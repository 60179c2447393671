// What a new client's login needs from its edge process and configuration epoch: the accounts,
// TLS and RSA material, and the server identity the greeting advertises.
import type { EdgeContext } from '../edge-context';
import type { EdgeEpoch } from '../epoch';
import type { LoginSettings } from './client-login';

export function loginSettings(edge: EdgeContext, epoch: EdgeEpoch, remoteHost: string | undefined): LoginSettings {
  const advertised = edge.advertised();
  return {
    serverVersion: advertised.serverVersion,
    mariaDbCapabilities: advertised.mariaDbCapabilities,
    accounts: epoch.accounts,
    tls: edge.tls,
    rsa: edge.rsa,
    sha2Cache: edge.sha2Cache,
    remoteHost: remoteHost ?? 'unknown',
    logger: edge.logger,
    localInfile: epoch.config.mysql.local_infile,
    routes: epoch.routes,
  };
}
