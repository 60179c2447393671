// PROXY protocol v2 to backends with `proxy_protocol = true` (MariaDB's proxy_protocol_networks): a
// connection opened on behalf of clients of one address says so in its header; any other connection
// of the edge's own (probes, KILL, fanout copies) sends LOCAL, so the server keeps the socket's address.
import type { DeepReadonly, MysqlBackendConfig } from '@dbproxy/config';
import { encodeProxyV2, encodeProxyV2Local, type ProxiedAddresses } from '@dbproxy/runtime';

/** The header a new connection to `config` opens with: null when the backend does not read the PROXY protocol. */
export function proxyHeaderFor(config: DeepReadonly<MysqlBackendConfig>, origin: ProxiedAddresses | undefined): Buffer | null {
  if (!config.proxy_protocol) return null;
  return origin ? encodeProxyV2(origin) : encodeProxyV2Local();
}

/**
 * The key of the pool a session's statements borrow from: a backend that reads the PROXY protocol has
 * one pool per client address (a connection's header names one client host for its whole life, so
 * only sessions from that host may reuse it); other backends' pools are shared by every client.
 */
export function originPoolKey(backend: string, proxied: boolean, origin: ProxiedAddresses | undefined): string {
  return proxied && origin ? `${backend} from ${origin.source.address}` : backend;
}
