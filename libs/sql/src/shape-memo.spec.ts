// ShapeMemo through SqlRouter: a statement recognised by shape gets exactly the route a full
// tokenizer run gives it, whatever its literals hold; routes that depend on values never come from it.
import { SqlRouter, type SqlRoute, type SqlRouterOptions } from './router';
import { SHAPE_MAX_LENGTH } from './shape-memo';

const RULES: SqlRouterOptions['shardRules'] = [{ table: 'users', column: 'id', map: { kind: 'hash', shards: ['s0', 's1'] } }];
const make = (dialect: 'mysql' | 'postgresql'): SqlRouter => new SqlRouter({ dialect, shardRules: RULES, multiShard: 'all_shards', cacheSize: 64 });

/** A route without its cache field (a fresh router always misses) and with errors as their codes. */
function comparable(route: SqlRoute): unknown {
  const { cache: _cache, ...rest } = route;
  return JSON.parse(JSON.stringify(rest, (_k, v: unknown) => (v instanceof Error ? { error: (v as Error & { code?: string }).code ?? v.message } : v)));
}

// `§` marks where a generated literal goes: digits, a quoted string, or text that only looks like one
const TEMPLATES = [
  'SELECT abalance FROM pgbench_accounts WHERE aid = §;',
  'SELECT abalance FROM pgbench_accounts WHERE aid = §',
  'SELECT name, email FROM customers WHERE id = § AND region = §',
  'SELECT * FROM orders_archive WHERE id IN (§, §, §)',
  'SELECT * FROM users_profile WHERE name = § LIMIT §',
  'UPDATE accounts_ledger SET balance = balance + § WHERE id = §',
  'INSERT INTO events_table (kind, payload) VALUES (§, §)',
  'SELECT * FROM users WHERE id = §',
  'SELECT count(*) FROM inventory_items WHERE qty > §',
  'SELECT * FROM documents_store WHERE body = §;SELECT §',
  'SELECT pg_advisory_lock(§) FROM generate_series(1, §)',
  'SET autocommit = §',
  'SELECT * FROM measurements WHERE v=§',
  'SELECT * FROM measurements WHERE v = § /* dbproxy:primary */',
  'SELECT * FROM measurements WHERE v = § -- trailing',
  'SELECT * FROM "quoted table x" WHERE c = §',
];

const PIECES = ['0', '7', '42', '4711', '1234567890123', "'x'", "''", "'a b'", "'it''s'", "'back\\slash'", "'--'", "'/*'", "'§'", "'ünï'", '-5', '1.5', '1e5', '0x1F', '$1', '?', "E'x'", 'NULL', '1abc', "'x'y'", "'unterminated"];

/** A small deterministic generator: the same cases in every run. */
function* cases(seed: number, count: number): Generator<string> {
  let state = seed;
  const next = (n: number): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % n;
  };
  for (let i = 0; i < count; i++) {
    const template = TEMPLATES[next(TEMPLATES.length)] as string;
    yield template.replace(/§/g, () => PIECES[next(PIECES.length)] as string);
  }
}

describe.each(['mysql', 'postgresql'] as const)('SqlRouter shapes (%s)', (dialect) => {
  it('routes every statement as a router that has seen nothing would', () => {
    const router = make(dialect);
    for (const text of cases(dialect === 'mysql' ? 1 : 2, 3000)) {
      expect({ text, route: comparable(router.route(text)) }).toEqual({ text, route: comparable(make(dialect).route(text)) });
    }
    expect(router.stats().hits).toBeGreaterThan(500);
  });

  it('finds from UTF-8 bytes, undecoded, only what route() on the text gives', () => {
    const router = make(dialect);
    let found = 0;
    for (const text of cases(dialect === 'mysql' ? 3 : 4, 3000)) {
      const bytes = Buffer.from(`Q${text}\0`, 'utf8'); // within a larger buffer, as in a client's message
      const known = router.routeKnownBytes(bytes, 1, bytes.length - 1);
      if (known !== undefined) {
        found++;
        expect({ text, route: known }).toEqual({ text, route: router.route(text) });
      }
      const route = known ?? router.route(text);
      expect({ text, route: comparable(route) }).toEqual({ text, route: comparable(make(dialect).route(text)) });
    }
    expect(found).toBeGreaterThan(500);
    // a literal holding characters beyond ASCII is matched by its bytes
    router.route("SELECT * FROM users_profile WHERE name = 'x' LIMIT 1");
    const wide = Buffer.from("SELECT * FROM users_profile WHERE name = 'ünï ü' LIMIT 10", 'utf8');
    expect(router.routeKnownBytes(wide, 0, wide.length)).toBe(router.route("SELECT * FROM users_profile WHERE name = 'y' LIMIT 1"));
    // a shape whose fixed text is beyond ASCII is found from the text only
    router.route("SELECT * FROM documents_store WHERE tïtle = 'x'");
    const fixedWide = Buffer.from("SELECT * FROM documents_store WHERE tïtle = 'y'", 'utf8');
    expect(router.routeKnownBytes(fixedWide, 0, fixedWide.length)).toBeUndefined();
    expect(router.route("SELECT * FROM documents_store WHERE tïtle = 'y'").cache).toBe('hit');
  });

  it('answers a repeated shape from its earlier route, counted as a cache hit', () => {
    const router = make(dialect);
    const first = router.route('SELECT abalance FROM pgbench_accounts WHERE aid = 17;');
    const again = router.route('SELECT abalance FROM pgbench_accounts WHERE aid = 4711;');
    const quoted = router.route("SELECT name, email FROM customers WHERE id = 1 AND region = 'eu'");
    const quotedAgain = router.route("SELECT name, email FROM customers WHERE id = 22 AND region = 'north america'");
    expect(first.cache).toBe('miss');
    expect(again.cache).toBe('hit');
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(router.route('SELECT abalance FROM pgbench_accounts WHERE aid = 5;')).toBe(again);
    expect(quotedAgain).toBe(router.route("SELECT name, email FROM customers WHERE id = 3 AND region = ''"));
    expect(quoted.cache).toBe('miss');
    expect(router.stats()).toMatchObject({ hits: 4, misses: 2 });
  });

  it('never answers from a shape what depends on a value: shard keys, SET autocommit, comments', () => {
    const router = make(dialect);
    const s = (id: number) => router.route(`SELECT * FROM users WHERE id = ${id}`).decision;
    expect(s(1)).not.toEqual(s(2));
    const off = router.route('SET autocommit = 0').classification;
    expect(router.route('SET autocommit = 1').classification).not.toEqual(off);
    // a shape's route would be one object every time
    const commented = (n: number) => router.route(`SELECT * FROM measurements WHERE v = ${n} /* dbproxy:primary */`);
    commented(1);
    expect(commented(3)).not.toBe(commented(2));
    const plain = (n: number) => router.route(`SELECT * FROM measurements WHERE v = ${n}`);
    plain(1);
    expect(plain(3)).toBe(plain(2));
  });

  it('keeps no statement longer than SHAPE_MAX_LENGTH', () => {
    const router = make(dialect);
    const long = (n: number) => `SELECT * FROM measurements WHERE v = ${n} AND note = '${'x'.repeat(SHAPE_MAX_LENGTH)}'`;
    expect(router.route(long(1)).cache).toBe('miss');
    const second = router.route(long(2));
    expect(second.cache).toBe('hit'); // from the fingerprint cache, after a tokenizer run
    expect(router.route(long(3))).not.toBe(second); // a shape's route would be the same object every time
    const short = (n: number) => `SELECT * FROM measurements WHERE v = ${n} AND note = 'x'`;
    router.route(short(1));
    expect(router.route(short(3))).toBe(router.route(short(2)));
  });

  it('does not take a statement whose literal only starts like the earlier one', () => {
    const router = make(dialect);
    router.route('SELECT * FROM measurements WHERE v = 5');
    for (const text of ['SELECT * FROM measurements WHERE v = 5.5', 'SELECT * FROM measurements WHERE v = 5e3', 'SELECT * FROM measurements WHERE v = 0x1F', 'SELECT * FROM measurements WHERE v = 5abc']) {
      expect(comparable(router.route(text))).toEqual(comparable(make(dialect).route(text)));
    }
  });
});
