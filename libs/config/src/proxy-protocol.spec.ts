// The PROXY protocol keys: networks are CIDRs or addresses, the size bound holds any address block,
// and PostgreSQL backends refuse proxy_protocol with the reason (the server cannot read it).
import { formatIssue, parseToml, validateDocument } from './index';

function issues(toml: string): string[] {
  const parsed = parseToml(toml);
  if (!parsed.ok) throw new Error(parsed.issues.map(formatIssue).join('\n'));
  const result = validateDocument(parsed.document, {});
  return result.ok ? [] : result.issues.map(formatIssue);
}

describe('PROXY protocol configuration', () => {
  it('accepts IPv4 and IPv6 networks and single addresses, and a MySQL backend with proxy_protocol', () => {
    const ok = issues('[proxy]\nproxy_protocol_from = ["10.0.0.0/8", "fd00::/8", "192.0.2.10", "::1"]\n[[mysql_backends]]\nname = "p"\naddress = "h:3306"\nrole = "primary"\nproxy_protocol = true\n');
    expect(ok).toEqual([]);
  });

  it('refuses a network that is not one, a prefix too long for its family, and a size bound below 232 bytes', () => {
    const found = issues('[proxy]\nproxy_protocol_from = ["10.0.0.0/33", "lb.internal", "fd00::/129"]\nproxy_protocol_max_header_bytes = 100\n');
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/proxy_protocol_from\[0\].*10\.0\.0\.0\/8/),
        expect.stringMatching(/proxy_protocol_from\[1\]/),
        expect.stringMatching(/proxy_protocol_from\[2\]/),
        expect.stringMatching(/proxy_protocol_max_header_bytes.*232/),
      ]),
    );
  });

  it('refuses proxy_protocol on a PostgreSQL backend, saying why', () => {
    const found = issues('[[postgres_backends]]\nname = "p"\naddress = "h:5432"\nrole = "primary"\nproxy_protocol = true\n');
    expect(found).toEqual([expect.stringMatching(/postgres_backends\[0\]\.proxy_protocol.*PostgreSQL servers do not read the PROXY protocol/)]);
  });
});
