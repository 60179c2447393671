// SqlRouter: options, the fingerprint cache and its counters, prepared statements, hints, bounds, telemetry.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Channels } from '@dbproxy/util';
import { SqlRouter, type SqlRouterOptions } from './router';

const RULES: SqlRouterOptions['shardRules'] = [
  { table: 'users', column: 'id', map: { kind: 'hash', shards: ['s0', 's1'] } },
  { table: 'orders', column: 'user_id', map: { kind: 'hash', shards: ['s0', 's1', 's2'] } },
];
const make = (overrides: Partial<SqlRouterOptions> = {}): SqlRouter =>
  new SqlRouter({ dialect: 'mysql', shardRules: RULES, multiShard: 'all_shards', cacheSize: 16, ...overrides });

describe('SqlRouter options', () => {
  it.each([
    [{ dialect: 'oracle' }, /unknown dialect/],
    [{ cacheSize: 0 }, /cacheSize/],
    [{ multiShard: 'some' }, /multiShard/],
    [{ maxParseTokens: -1 }, /maxParseTokens/],
    [{ shardRules: [{ table: 'a.b.c', column: 'id', map: { kind: 'hash', shards: ['x'] } }] }, /schema.table/],
    [{ shardRules: [{ table: 'users', column: 'id', map: { kind: 'hash', shards: ['x'] } }, { table: 'users', column: 'id', map: { kind: 'hash', shards: ['y'] } }] }, /two shard rules/],
  ])('rejects %j', (overrides, message) => {
    expect(() => make(overrides as Partial<SqlRouterOptions>)).toThrow(expect.objectContaining({ code: 'DBP_ERR_SQL_INVALID_OPTIONS', message: expect.stringMatching(message) }));
  });

  it('passes shard map errors through', () => {
    expect(() => make({ shardRules: [{ table: 't', column: 'id', map: { kind: 'hash', shards: [] } }] })).toThrow(
      expect.objectContaining({ code: 'DBP_ERR_ROUTING_INVALID_SPEC' }),
    );
  });
});

describe('SqlRouter cache', () => {
  it('parses a statement shape once and answers later executions from the cache', () => {
    const router = make();
    expect(router.route('SELECT * FROM users WHERE id = 1').cache).toBe('miss');
    const hit = router.route('select *   from users where id = 2 /* again */');
    expect(hit.cache).toBe('hit');
    expect(hit.decision).toEqual({ kind: 'shards', shards: ['s0'], keys: [2], via: 'key' });
    expect(router.stats()).toMatchObject({ size: 1, hits: 1, misses: 1, parses: 1, parseFailures: 0 });
  });

  it('evicts the least recently used shape at capacity', () => {
    const router = make({ cacheSize: 2 });
    router.route('SELECT a FROM t');
    router.route('SELECT b FROM t');
    router.route('SELECT a FROM t');
    router.route('SELECT c FROM t');
    expect(router.route('SELECT a FROM t').cache).toBe('hit');
    expect(router.route('SELECT b FROM t').cache).toBe('miss');
    expect(router.stats()).toMatchObject({ capacity: 2, evictions: 2 });
  });

  it('counts parse failures and statements over the parse bound', () => {
    const router = make({ maxParseTokens: 8 });
    const failed = router.route("SELECT * FROM t WHERE a IS NOT DISTINCT FROM 'x' UNION SELECT 1 FROM t2 WHERE b = a");
    expect(failed.classification.unsafeReasons.map((r) => r.code)).toContain('too_complex');
    router.route('SELECT * FROM users WHERE id <=> 1');
    expect(router.stats()).toMatchObject({ tooComplex: 1, parseFailures: 1 });
  });

  it('routes an ORM-shaped statement by its key under the default parse bound', () => {
    const conditions = ["o.status = 'paid'", 'o.total >= 10', "o.currency = 'EUR'", "o.created_at >= '2024-01-01'", "o.created_at < '2024-02-01'", 'o.deleted_at IS NULL', "o.region LIKE 'eu%'"];
    const columns = Array.from({ length: 15 }, (_, i) => `o.col${i}`).join(', ');
    const route = make().route(`SELECT ${columns} FROM orders o WHERE o.user_id = 7 AND ${conditions.join(' AND ')} ORDER BY o.created_at DESC LIMIT 20`);
    expect(route.decision).toEqual({ kind: 'shards', shards: ['s1'], keys: [7], via: 'key' });
    expect(route.classification).toMatchObject({ replicaSafe: true, analyzedBy: 'parser' });
  });

  it('says how long a statement over the parse bound is, the limit, and the option that raises it', () => {
    const router = make({ maxParseTokens: 20 });
    const sql = 'SELECT * FROM orders o WHERE o.user_id = 7 AND o.a = 1 AND o.b = 2 AND o.c = 3 AND o.d = 4';
    const refused = router.route(sql).decision;
    expect(refused).toMatchObject({ kind: 'reject', error: { code: 'DBP_ERR_SQL_SHARD_UNSUPPORTED' } });
    const message = refused.kind === 'reject' ? refused.error.message : '';
    expect(message).toMatch(/too long to analyze: \d+ tokens .* exceed the limit of 20 \(SqlRouter maxParseTokens, config key \[mysql\] max_parse_tokens\)/);
    expect(message).toContain('dbproxy_shard');
    expect(make({ maxParseTokens: 40 }).route(sql).decision).toMatchObject({ kind: 'shards', keys: [7] });
  });

  it('counts nested parentheses extra, so node-sql-parser never backtracks through deep nesting', () => {
    let nested = 'a = 1';
    for (let i = 0; i < 12; i++) nested = `(${nested} OR b${i} = ${i})`; // ~85 tokens; node-sql-parser's PostgreSQL grammar takes ~100 ms
    const router = make({ dialect: 'postgresql' });
    const route = router.route(`SELECT * FROM users WHERE id = 1 AND ${nested}`);
    expect(route.classification.unsafeReasons).toContainEqual(expect.objectContaining({ code: 'too_complex' }));
    expect(route.decision).toMatchObject({ kind: 'reject', error: { code: 'DBP_ERR_SQL_SHARD_UNSUPPORTED' } });
    expect(router.stats()).toMatchObject({ tooComplex: 1, parses: 0 });
    const shallow = router.route('SELECT * FROM users WHERE id = 1 AND (((a = 1 OR b = 2) AND c = 3) OR d = 4)');
    expect(shallow.classification).toMatchObject({ replicaSafe: true, analyzedBy: 'parser' });
    expect(shallow.decision).toMatchObject({ kind: 'shards', keys: [1] });
  });

  it('publishes every lookup on the sql cache diagnostics channel', () => {
    const seen: unknown[] = [];
    const listener = (message: unknown): void => {
      seen.push(message);
    };
    subscribe(Channels.sqlCacheLookup, listener);
    try {
      const router = make();
      router.route('SELECT 1');
      router.route('SELECT 2');
    } finally {
      unsubscribe(Channels.sqlCacheLookup, listener);
    }
    expect(seen).toEqual([{ hit: false }, { hit: true }]);
  });
});

describe('SqlRouter prepared statements', () => {
  it('binds typed parameters without scanning the text again, even after eviction', () => {
    const router = make({ cacheSize: 1 });
    const prepared = router.prepare('SELECT * FROM orders WHERE user_id IN (?, ?) AND status = ?');
    expect(prepared.parameterCount).toBe(3);
    router.route('SELECT 1'); // evicts the prepared shape from the cache
    const route = router.routePrepared(prepared, [4, 5n, 'open']);
    expect(route.decision).toEqual({ kind: 'shards', shards: ['s1', 's2'], keys: [4, 5n], via: 'key' });
    expect(router.stats().misses).toBe(2);
  });

  it('refuses unbound or unusable key parameters with a reason', () => {
    const router = make();
    const prepared = router.prepare('SELECT * FROM users WHERE id = ?');
    expect(router.routePrepared(prepared, []).decision).toMatchObject({ kind: 'reject', error: { code: 'DBP_ERR_SQL_SHARD_KEY_UNBOUND' } });
    expect(router.routePrepared(prepared, [null]).decision).toMatchObject({ kind: 'reject', error: { code: 'DBP_ERR_SQL_SHARD_KEY_INVALID', message: expect.stringMatching(/NULL/) } });
    expect(router.routePrepared(prepared, [2.5]).decision).toMatchObject({ kind: 'reject', error: { code: 'DBP_ERR_SQL_SHARD_KEY_INVALID' } });
  });

  it('counts the leading parameters routing reads: up to the last shard key or autocommit value', () => {
    const router = make();
    const keyLast = router.prepare('UPDATE users SET name = ?, note = ? WHERE id = ?');
    expect(keyLast.routingParameters).toBe(3);
    const keyFirst = router.prepare('SELECT * FROM users WHERE id = ? AND name = ?');
    expect(keyFirst.routingParameters).toBe(1);
    expect(router.routePrepared(keyFirst, [4]).decision).toEqual(router.routePrepared(keyFirst, [4, 'ignored']).decision);
    expect(router.prepare('SELECT * FROM users WHERE id = 7 AND name = ?').routingParameters).toBe(0);
    expect(router.prepare('SELECT ?, ? FROM unsharded_table').routingParameters).toBe(0);
    expect(router.prepare('SET autocommit = ?').routingParameters).toBe(1);
    const insert = router.prepare('INSERT INTO orders (note, user_id) VALUES (?, ?), (?, ?)');
    expect(insert.routingParameters).toBe(4);
    expect(router.prepare('INSERT INTO orders (user_id, note) VALUES (?, ?), (?, ?)').routingParameters).toBe(3);
  });

  it('decides SET autocommit from the bound value', () => {
    const router = make();
    const prepared = router.prepare('SET autocommit = ?');
    expect(router.routePrepared(prepared, [0]).classification.transaction).toBe('autocommit_off');
    expect(router.routePrepared(prepared, [1]).classification.transaction).toBe('autocommit_on');
    expect(router.routePrepared(prepared, ['ON']).classification.transaction).toBe('autocommit_on');
  });
});

describe('SqlRouter inserts', () => {
  it('groups rows per shard with their source spans, so the statement can be split', () => {
    const router = make();
    const sql = "INSERT INTO orders (user_id, note) VALUES (1, 'a'), (2, 'b'), (4, 'c'), (3, 'd')";
    const decision = router.route(sql).decision;
    if (decision.kind !== 'shards' || decision.rows === undefined) throw new Error(`unexpected ${decision.kind}`);
    const split = decision.rows.map((g) => `${g.shard}: ${g.spans.map(([a, b]) => sql.slice(a, b)).join(', ')}`);
    expect(split).toEqual(["s1: (1, 'a'), (4, 'c')", "s2: (2, 'b')", "s0: (3, 'd')"]);
  });
});

describe('SqlRouter hints', () => {
  it('routes a keyless statement to the hinted shard', () => {
    expect(make().route("/*dbproxy_shard='s1'*/ DELETE FROM users WHERE name = 'x'").decision).toEqual({ kind: 'shards', shards: ['s1'], keys: [], via: 'hint' });
    expect(make().route("/*dbproxy_shard='s2'*/ SELECT 1").decision).toMatchObject({ shards: ['s2'], via: 'hint' });
  });

  it('refuses unknown shards and hints that contradict the key', () => {
    expect(make().route("/*dbproxy_shard='nope'*/ SELECT 1").decision).toMatchObject({ kind: 'reject', error: { code: 'DBP_ERR_SQL_SHARD_HINT_UNKNOWN' } });
    expect(make().route("/*dbproxy_shard='s0'*/ SELECT * FROM users WHERE id = 1").decision).toMatchObject({
      kind: 'reject',
      error: { code: 'DBP_ERR_SQL_SHARD_HINT_CONFLICT' },
    });
    expect(make().route("/*dbproxy_shard='s1'*/ SELECT * FROM users WHERE id = 1").decision).toMatchObject({ kind: 'shards', via: 'key' });
  });

  it('never lets a hint override a refusal about the statement itself', () => {
    expect(make().route("/*dbproxy_shard='s1'*/ UPDATE users SET id = 2 WHERE id = 1").decision).toMatchObject({ error: { code: 'DBP_ERR_SQL_SHARD_KEY_ASSIGNED' } });
  });

  it('keeps a read on the primary when the hint says so', () => {
    const route = make().route("/*dbproxy_route='primary'*/ SELECT * FROM users WHERE id = 1");
    expect(route.classification.replicaSafe).toBe(true);
    expect(route.replicaEligible).toBe(false);
  });
});

describe('SqlRouter policy', () => {
  it('refuses multi-shard shapes when multiShard is reject', () => {
    const decision = make({ multiShard: 'reject' }).route('SELECT * FROM users WHERE id > 3').decision;
    expect(decision).toMatchObject({ kind: 'reject', error: { code: 'DBP_ERR_SQL_SHARD_MULTI', message: expect.stringContaining('users') } });
  });

  it('treats allow-listed functions as replica-safe', () => {
    const sql = 'SELECT app.slugify(name) FROM t';
    expect(make().route(sql).classification.replicaSafe).toBe(false);
    expect(make({ allowedFunctions: ['APP.slugify'] }).route(sql).classification.replicaSafe).toBe(true);
  });

  it('compares quoted function names as each dialect does, in statements and in the allow-list', () => {
    const safe = (router: SqlRouter, sql: string): boolean => router.route(sql).classification.replicaSafe;
    const mysql = make({ allowedFunctions: ['`Slugify`'] });
    expect([safe(mysql, 'SELECT `slugify`(name) FROM t'), safe(mysql, 'SELECT SLUGIFY(name) FROM t'), safe(mysql, 'SELECT `other`(name) FROM t')]).toEqual([true, true, false]);
    const pg = make({ dialect: 'postgresql', allowedFunctions: ['slugify', '"Score"', 'app."Rank"'] });
    expect(safe(pg, 'SELECT "slugify"(name) FROM t')).toBe(true);
    expect(safe(pg, 'SELECT Slugify(name) FROM t')).toBe(true); // unquoted: folded to slugify
    expect(safe(pg, 'SELECT "Slugify"(name) FROM t')).toBe(false); // quoted: a different function
    expect(safe(pg, 'SELECT "Score"(name) FROM t')).toBe(true);
    expect(safe(pg, 'SELECT score(name) FROM t')).toBe(false);
    expect(safe(pg, 'SELECT app."Rank"(name) FROM t')).toBe(true);
    expect(safe(pg, 'SELECT app.rank(name) FROM t')).toBe(false);
    expect(safe(pg, `SELECT "NOW"()`)).toBe(false);
    expect(safe(pg, `SELECT "now"()`)).toBe(true);
  });

  it('routes nothing by key without rules', () => {
    const router = make({ shardRules: [] });
    expect(router.route('DELETE FROM users').decision).toEqual({ kind: 'unsharded' });
    expect(router.route("/*dbproxy_shard='x'*/ SELECT 1").decision).toEqual({ kind: 'unsharded' });
  });
});
