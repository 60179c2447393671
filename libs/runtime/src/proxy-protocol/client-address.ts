// A client's addresses as the PROXY protocol header named them: the accepted socket (and the socket
// that later takes over its handle) reports them, and backends are sent them.
import { isIPv4, type Socket } from 'node:net';
import { unmapIPv4, type ProxiedAddresses } from './encode';

const PROXIED = Symbol('dbproxy.proxied');
type ProxiedSocket = Socket & { [PROXIED]?: ProxiedAddresses };

/** Makes the socket report the header's addresses (remoteAddress/Port, localAddress/Port, remoteFamily). */
export function presentAs(socket: Socket, addresses: ProxiedAddresses): void {
  const s = socket as ProxiedSocket;
  s[PROXIED] = addresses;
  const { source, destination } = addresses;
  const values: Record<string, string | number> = {
    remoteAddress: source.address,
    remotePort: source.port,
    remoteFamily: isIPv4(source.address) ? 'IPv4' : 'IPv6',
    localAddress: destination.address,
    localPort: destination.port,
  };
  for (const [key, value] of Object.entries(values)) Object.defineProperty(s, key, { value, configurable: true, enumerable: true });
}

/** The header's addresses a socket was presented with, if any (for a socket that takes over its handle). */
export function proxiedAddressesOf(socket: Socket): ProxiedAddresses | undefined {
  return (socket as ProxiedSocket)[PROXIED];
}

/** The socket that now carries `from`'s connection (TLS) reports the header's addresses too. */
export function carryClientAddress(from: Socket, to: Socket): void {
  const addresses = proxiedAddressesOf(from);
  if (addresses) presentAs(to, addresses);
}

/** The addresses to send a backend on behalf of the client of `socket`: the header's, else the socket's own. */
export function clientAddressesOf(socket: Socket): ProxiedAddresses {
  return (
    proxiedAddressesOf(socket) ?? {
      source: { address: unmapIPv4(socket.remoteAddress ?? '0.0.0.0'), port: socket.remotePort ?? 0 },
      destination: { address: unmapIPv4(socket.localAddress ?? '0.0.0.0'), port: socket.localPort ?? 0 },
    }
  );
}
