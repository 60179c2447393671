import { join } from 'node:path';
import { formatIssue, loadConfigFile, parseToml, validateDocument } from './index';

const example = join(__dirname, '..', '..', '..', 'config', 'dbproxy.example.toml');

function issuesOf(toml: string, env: Record<string, string> = {}): string[] {
  const parsed = parseToml(toml);
  if (!parsed.ok) return parsed.issues.map(formatIssue);
  const result = validateDocument(parsed.document, env);
  return result.ok ? [] : result.issues.map(formatIssue);
}

describe('loading configuration', () => {
  it('accepts the example configuration and fills defaults', () => {
    const result = loadConfigFile(example, {});
    if (!result.ok) throw new Error(result.issues.map(formatIssue).join('\n'));
    expect(result.config.mysql.read_write_listen).toBe('0.0.0.0:6033');
    expect(result.config.users[0]?.password).toBe('app-secret');
    expect(result.config.config_api.tokens.map((t) => t.role)).toEqual(['admin', 'read_only']);
  });

  it('bounds SQL parsing with max_parse_tokens in [mysql] and [postgres], default 200, a positive integer', () => {
    const defaults = validateDocument({}, {});
    if (!defaults.ok) throw new Error(defaults.issues.map(formatIssue).join('\n'));
    expect([defaults.config.mysql.max_parse_tokens, defaults.config.postgres.max_parse_tokens]).toEqual([200, 200]);
    expect(issuesOf('[mysql]\nmax_parse_tokens = 0\n[postgres]\nmax_parse_tokens = 1.5\n')).toEqual([
      'mysql.max_parse_tokens: must be at least 1',
      'postgres.max_parse_tokens: expected an integer',
    ]);
  });

  it('reports an unset variable, a duplicate backend and a shard without a primary at once', () => {
    const issues = issuesOf(`
      [[mysql_backends]]
      name = "a"
      address = "db1:3306"
      role = "primary"
      password = "\${DBPROXY_TEST_UNSET}"
      [[mysql_backends]]
      name = "a"
      address = "db2:3306"
      role = "replica"
      [[mysql_backends]]
      name = "c"
      address = "db3:3306"
      role = "replica"
      shard = "s2"
    `);
    expect(issues).toEqual(
      expect.arrayContaining([
        'mysql_backends[0].password: environment variable DBPROXY_TEST_UNSET is not set',
        'mysql_backends[1].name: duplicate backend name "a" (also mysql_backends[0])',
        'mysql_backends[2].shard: shard "s2" has no primary',
      ]),
    );
    expect(issues).toHaveLength(3);
  });

  it('names the key path of a malformed address and of an unknown key', () => {
    const issues = issuesOf(`
      [[mysql_backends]]
      name = "p"
      address = "db1:3306"
      role = "primary"
      [[mysql_backends]]
      name = "r"
      address = "db2"
      role = "replica"
      colour = "blue"
    `);
    expect(issues).toEqual(['mysql_backends[1].address: expected host:port', 'mysql_backends[1].colour: unknown key']);
  });

  it('rejects a second primary in one shard', () => {
    const issues = issuesOf(`
      [[postgres_backends]]
      name = "p1"
      address = "h:5432"
      role = "primary"
      [[postgres_backends]]
      name = "p2"
      address = "h2:5432"
      role = "primary"
    `);
    expect(issues).toEqual(['postgres_backends[1].role: shard "default" already has a primary (postgres_backends[0])']);
  });

  it('rejects two listeners on one address, wildcard hosts included', () => {
    const issues = issuesOf(`
      [mysql]
      enabled = true
      read_only_listen = "127.0.0.1:6432"
      [[mysql_backends]]
      name = "p"
      address = "h:3306"
      role = "primary"
      [postgres]
      enabled = true
      [[postgres_backends]]
      name = "p"
      address = "h:5432"
      role = "primary"
    `);
    expect(issues).toEqual(['postgres.read_write_listen: listens on 0.0.0.0:6432, which mysql.read_only_listen (127.0.0.1:6432) already uses']);
  });

  it('accepts [mysql.sharding] rules, refusing a shard without backends', () => {
    const issues = issuesOf(`
      [mysql.sharding]
      enabled = true
      [[mysql.sharding.rules]]
      table = "orders"
      column = "customer_id"
      map = { kind = "hash", shards = ["default", "s9"] }
      [[mysql_backends]]
      name = "p"
      address = "h:3306"
      role = "primary"
    `);
    expect(issues).toEqual(['mysql.sharding.rules[0].map.shards: shard "s9" has no backends in mysql_backends']);
  });

  it('parses range bounds beyond 2^53 exactly', () => {
    const parsed = parseToml(`
      [[postgres_backends]]
      name = "p"
      address = "h:5432"
      role = "primary"
      [postgres.sharding]
      enabled = true
      map = { kind = "range", ranges = [{ to = 9223372036854775807, shard = "default" }, { from = "9223372036854775807", shard = "default" }] }
    `);
    if (!parsed.ok) throw new Error('parse failed');
    const result = validateDocument(parsed.document, {});
    if (!result.ok) throw new Error(result.issues.map(formatIssue).join('\n'));
    const map = result.config.postgres.sharding.map;
    expect(map?.kind === 'range' && map.ranges[0]?.to).toBe(9223372036854775807n);
  });

  it('refuses a default_shard without backends when every statement or connection would go there', () => {
    const mysql = '[mysql]\nenabled = true\n[[mysql_backends]]\nname = "p"\naddress = "h:3306"\nrole = "primary"\nshard = "s1"\n';
    expect(issuesOf(mysql)).toEqual(['mysql.sharding.default_shard: shard "default" has no backends in mysql_backends']);
    expect(issuesOf(`${mysql}[mysql.sharding]\ndefault_shard = "s1"\n`)).toEqual([]);
    const pg = '[postgres]\nenabled = true\n[[postgres_backends]]\nname = "p"\naddress = "h:5432"\nrole = "primary"\nshard = "s1"\n';
    expect(issuesOf(pg)).toEqual(['postgres.sharding.default_shard: shard "default" has no backends in postgres_backends']);
    expect(issuesOf(`${pg}[postgres.sharding]\nenabled = true\nmap = { kind = "value", values = { eu = "s1" } }\n`)).toEqual([]);
  });

  it('accepts [[postgres.sharding.rules]] in transaction mode and refuses what they cannot do', () => {
    const backends = ['s0', 's1'].map((s) => `[[postgres_backends]]\nname = "${s}"\naddress = "h:5432"\nrole = "primary"\nshard = "${s}"\n`).join('');
    const rule = '[[postgres.sharding.rules]]\ntable = "orders"\ncolumn = "customer_id"\nmap = { kind = "hash", shards = ["s0", "s1"] }\n';
    const sharding = (extra: string) => `[postgres]\nenabled = true\nrouting_mode = "transaction"\n${backends}[postgres.sharding]\ndefault_shard = "s0"\n${extra}${rule}`;
    expect(issuesOf(sharding('multi_shard = "all_shards"\n'))).toEqual([]);
    expect(issuesOf(sharding('').replace('routing_mode = "transaction"', 'routing_mode = "transparent"'))).toEqual([
      'postgres.sharding.rules: statement sharding rules are honoured only in routing_mode = "transaction" (transparent mode relays the wire and does not route statements)',
    ]);
    expect(issuesOf(sharding('enabled = true\nmap = { kind = "value", values = { eu = "s1" } }\n'))).toEqual([
      'postgres.sharding.rules: cannot be combined with enabled = true (a shard chosen by startup parameter); choose statement rules or the startup parameter',
    ]);
    expect(issuesOf(sharding('').replace('"s0", "s1"]', '"s0", "s9"]'))).toEqual(['postgres.sharding.rules[0].map.shards: shard "s9" has no backends in postgres_backends']);
    expect(issuesOf(sharding('').replace(rule, '').replace('default_shard = "s0"', 'default_shard = "s0"\nmulti_shard = "all_shards"'))).toEqual([
      'postgres.sharding.multi_shard: only applies to [[postgres.sharding.rules]]; there are none',
    ]);
  });

  it('refuses keys one service honours where another would ignore them', () => {
    const mysql = '[mysql]\nenabled = true\n[[mysql_backends]]\nname = "p"\naddress = "h:3306"\nrole = "primary"\n';
    // mysql-edge limits users to their shards too (refusing statements routed elsewhere)
    expect(issuesOf(`${mysql}[[users]]\nname = "u"\npassword = "x"\nshards = ["s9"]\n`)).toEqual([]);
    expect(issuesOf(`${mysql}[[users]]\nname = "u"\npassword = "x"\nshards = ["default"]\n`)).toEqual([]);
    expect(issuesOf(`${mysql}[mysql_backends.tls]\nenabled = true\nca_path = "/ca.pem"\n`)).toEqual([
      'mysql_backends[0].tls.use_webpki_roots: not implemented in this build yet in mysql-edge (it trusts only ca_path when it is set); set use_webpki_roots = false',
    ]);
    expect(issuesOf(`${mysql}[mysql_backends.tls]\nenabled = true\nuse_webpki_roots = false\n`)).toEqual([
      'mysql_backends[0].tls.use_webpki_roots: not implemented in this build yet in mysql-edge (it trusts the public roots when there is no ca_path); set use_webpki_roots = true',
    ]);
    expect(issuesOf(`${mysql}[mysql_backends.tls]\nenabled = true\nuse_webpki_roots = false\nca_path = "/ca.pem"\n`)).toEqual([]);
    const redis = '[redis]\nenabled = true\n[[redis_backends]]\nname = "r"\naddress = "h:6379"\nrole = "primary"\n[proxy.tls]\ncert_path = "/c.pem"\nkey_path = "/k.pem"\n';
    expect(issuesOf(`${redis}mode = "required"\n`)).toEqual([
      'proxy.tls.mode: "required" is not implemented in this build yet in redis-edge (its listeners do not offer TLS and would accept plaintext clients)',
    ]);
    expect(issuesOf(`${redis}mode = "optional"\n`)).toEqual([]);
    const pg = '[[postgres_backends]]\nname = "p"\naddress = "h:5432"\nrole = "primary"\ndatabase = "app"\n[postgres]\nenabled = true\nread_consistency = "causal"\n';
    expect(issuesOf(pg)).toEqual([
      'postgres.read_consistency: "causal" is not implemented in this build yet in transparent routing mode (a transparent session stays on one backend; set routing_mode = "transaction")',
    ]);
    expect(issuesOf(`${pg}routing_mode = "transaction"\n`)).toEqual([]);
  });

  it('validates [redis.cache] and refuses it where it would do nothing (connection mode)', () => {
    const redis = (mode: string, cache: string) => `[redis]\nenabled = true\nmode = "${mode}"\n[redis.cache]\n${cache}[[redis_backends]]\nname = "r"\naddress = "h:6379"\nrole = "primary"\n`;
    expect(issuesOf(redis('command', 'enabled = true\nmax_bytes = 1048576\nmax_age_seconds = 30\n'))).toEqual([]);
    expect(issuesOf(redis('connection', 'enabled = true\n'))).toEqual(['redis.cache.enabled: the reply cache needs redis.mode = "command" (connection mode pipes bytes unread)']);
    expect(issuesOf(redis('connection', 'enabled = false\n'))).toEqual([]);
    expect(issuesOf(redis('command', 'max_bytes = 0\n'))).toHaveLength(1);
    expect(issuesOf(redis('command', 'max_age_seconds = -1\n'))).toHaveLength(1);
    expect(issuesOf(redis('command', 'ttl = 5\n'))).toHaveLength(1);
    expect(issuesOf(redis('command', 'enabled = true\nconsistency = "bounded"\n'))).toEqual([]);
    expect(issuesOf(redis('command', 'consistency = "eventual"\n'))).toHaveLength(1);
  });

  it('reports TOML syntax errors with line and column', () => {
    expect(issuesOf('[mysql\nenabled = true')[0]).toMatch(/^\(document\): line 1, column \d+: /);
  });

  it('expands ${VAR:-default} and $${ escapes', () => {
    const parsed = parseToml(`
      [[users]]
      name = "\${DBPROXY_USER:-app}"
      password = "a$\${literal}"
    `);
    if (!parsed.ok) throw new Error('parse failed');
    const result = validateDocument(parsed.document, { DBPROXY_USER: 'svc' });
    expect(result.ok && result.config.users[0]).toMatchObject({ name: 'svc', password: 'a${literal}' });
  });
});
