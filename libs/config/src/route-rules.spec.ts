import { formatIssue, parseToml, validateDocument } from './index';

function issuesOf(toml: string): string[] {
  const parsed = parseToml(toml);
  if (!parsed.ok) return parsed.issues.map(formatIssue);
  const result = validateDocument(parsed.document, {});
  return result.ok ? [] : result.issues.map(formatIssue);
}

const mysql = `[mysql]\nenabled = true\n[[mysql_backends]]\nname = "a1"\naddress = "127.0.0.1:3306"\nrole = "primary"\nshard = "default"\n[[mysql_backends]]\nname = "b1"\naddress = "127.0.0.1:3307"\nrole = "primary"\nshard = "b"\n`;
const pg = `[postgres]\nenabled = true\n[[postgres_backends]]\nname = "p1"\naddress = "127.0.0.1:5432"\nrole = "primary"\nshard = "default"\n`;

describe('handshake route rules', () => {
  it('accepts routes to shards with backends and a default', () => {
    expect(issuesOf(mysql.replace('enabled = true\n', 'enabled = true\nroute_default = "default"\n') + `[[mysql.routes]]\nname = "b"\nuser = "r*"\nshard = "b"\n`)).toEqual([]);
  });

  it('names each problem with its key path', () => {
    const doc = mysql.replace('enabled = true\n', 'enabled = true\nroute_default = "nowhere"\n') + `[[mysql.routes]]\nname = "x"\nshard = "b"\n[[mysql.routes]]\nname = "x"\ndatabase = "d"\nshard = "zz"\n`;
    expect(issuesOf(doc)).toEqual([
      'mysql.routes[0]: needs database, user or both to match (the shard of logins no route matches is mysql.route_default)',
      'mysql.routes[1].shard: shard "zz" has no backends in mysql_backends',
      'mysql.routes[1].name: duplicate route name "x" (also mysql.routes[0])',
      'mysql.route_default: shard "nowhere" has no backends in mysql_backends',
    ]);
    expect(issuesOf(pg.replace('enabled = true\n', 'enabled = true\nroute_default = "default"\n'))).toEqual(['postgres.route_default: only applies to [[postgres.routes]]; there are none']);
  });

  it('refuses combinations this build does not route', () => {
    const doc = `${pg}[postgres.sharding]\nenabled = true\nmap = { kind = "hash", shards = ["default"] }\n[[postgres.routes]]\nname = "r"\ndatabase = "d"\nshard = "default"\n`;
    expect(issuesOf(doc)).toEqual(['postgres.routes: cannot be combined with [postgres.sharding] enabled = true or [[postgres.sharding.rules]] in this build (a routed session has one shard)']);
  });
});
