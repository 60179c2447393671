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

  it('requires every shard a sharding rule names to exist', () => {
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
      [[mysql_backends]]
      name = "p"
      address = "h:3306"
      role = "primary"
      [[mysql.sharding.rules]]
      table = "t"
      column = "id"
      map = { kind = "range", ranges = [{ to = 9223372036854775807, shard = "default" }, { from = "9223372036854775807", shard = "default" }] }
    `);
    if (!parsed.ok) throw new Error('parse failed');
    const result = validateDocument(parsed.document, {});
    if (!result.ok) throw new Error(result.issues.map(formatIssue).join('\n'));
    const map = result.config.mysql.sharding.rules[0]?.map;
    expect(map?.kind === 'range' && map.ranges[0]?.to).toBe(9223372036854775807n);
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
