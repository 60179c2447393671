// Resolves a green hostname to an IP: the test-only `proxy.test_hosts` map first (the simulator
// cannot change DNS), else a live DNS lookup.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export type HostResolver = (host: string) => Promise<string | null>;

export function hostResolver(testHosts: () => Readonly<Record<string, string>>): HostResolver {
  return async (host) => {
    if (isIP(host)) return host;
    const mapped = testHosts()[host.toLowerCase()] ?? testHosts()[host];
    if (mapped !== undefined) return mapped;
    try {
      return (await lookup(host)).address;
    } catch {
      return null;
    }
  };
}
