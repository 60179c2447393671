// Properties: fingerprints ignore literal values, list lengths, whitespace, comments and keyword case;
// binding a prepared template routes exactly like the statement with the literals written in.
import fc from 'fast-check';
import { Fingerprinter } from './fingerprint';
import { SqlRouter, type SqlRoute } from './router';
import { TextBuffer } from './scan-buffers';
import type { Dialect } from './tokenizer';

/** Statement skeletons: `{}` is a literal, `{list}` an IN list, `{rows}` VALUES rows, `_` whitespace. */
const SKELETONS: Record<Dialect, string[]> = {
  mysql: [
    'SELECT_c_FROM_sbtest1_WHERE_id={}',
    'SELECT_`id`,_`name`_FROM_`users`_AS_`User`_WHERE_`User`.`id`_IN_({list})_AND_`User`.`name`_LIKE_{}',
    'UPDATE_users_SET_name={}_WHERE_id_=_{}_LIMIT_{}',
    'INSERT_INTO_orders_(user_id,_total)_VALUES_{rows}',
    "SELECT_*_FROM_users_WHERE_id_BETWEEN_{}_AND_{}_AND_note_<>_{}_ORDER_BY_id_DESC",
    'DELETE_FROM_users_WHERE_id_=_{}_OR_id_IN_({list})',
  ],
  postgresql: [
    'SELECT_abalance_FROM_pgbench_accounts_WHERE_aid_=_{}',
    'SELECT_"User"."id"_FROM_"User"_WHERE_"User"."id"_IN_({list})_LIMIT_{}_OFFSET_{}',
    'UPDATE_pgbench_accounts_SET_abalance_=_abalance_+_{}_WHERE_aid_=_{}',
    'INSERT_INTO_"User"_("id",_"email")_VALUES_{rows}_RETURNING_"id"',
  ],
};

const mysqlString = fc.string({ maxLength: 12 }).map((s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`);
const pgString = fc.oneof(
  fc.string({ maxLength: 12 }).map((s) => `'${s.replace(/'/g, "''")}'`),
  fc.string({ maxLength: 12 }).map((s) => `E'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`),
  fc.string({ maxLength: 12 }).filter((s) => !s.includes('$')).map((s) => `$q$${s}$q$`),
);
const number = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(d)),
  fc.integer({ min: 0, max: 999 }).map((n) => `${n}.${n}`),
);
const literal = (dialect: Dialect) => fc.oneof(number, dialect === 'mysql' ? mysqlString : pgString);
const whitespace = fc.constantFrom(' ', '  ', '\n', '\t', ' /* note */ ', ' -- x\n ', '\r\n');

/** Fills a skeleton with literals and whitespace drawn from the generators. */
function fill(skeleton: string, dialect: Dialect, rows: number) {
  const holes = skeleton.split(/(\{\}|\{list\}|\{rows\}|_)/).filter((p) => p !== '');
  return fc.tuple(...holes.map((part) => {
    if (part === '{}') return literal(dialect);
    if (part === '{list}') return fc.array(literal(dialect), { minLength: 1, maxLength: 6 }).map((l) => l.join(', '));
    if (part === '{rows}') return fc.array(fc.tuple(fc.integer(), literal(dialect)), { minLength: rows, maxLength: rows }).map((r) => r.map(([a, b]) => `(${a}, ${b})`).join(', '));
    if (part === '_') return whitespace;
    // Keyword case varies; quoted identifiers keep theirs.
    return fc.constantFrom(part, part.replace(/("[^"]*"|`[^`]*`)|\b([A-Z][A-Z_]+)\b/g, (_m, quoted?: string, word?: string) => quoted ?? (word as string).toLowerCase()));
  })).map((parts) => parts.join(''));
}

describe('fingerprint properties', () => {
  for (const dialect of ['mysql', 'postgresql'] as const) {
    it(`${dialect}: ignores literal values, list lengths, row counts, whitespace and comments`, () => {
      const fingerprinter = new Fingerprinter(dialect);
      fc.assert(
        fc.property(
          fc.constantFrom(...SKELETONS[dialect]),
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 4 }),
          fc.nat(),
          (skeleton, rowsA, rowsB, seed) => {
            const [a, b] = fc.sample(fc.tuple(fill(skeleton, dialect, rowsA), fill(skeleton, dialect, rowsB)), { numRuns: 1, seed })[0];
            const fa = fingerprinter.run(a).out.toString();
            const fb = fingerprinter.run(b).out.toString();
            expect(fb).toBe(fa);
          },
        ),
        { numRuns: 300 },
      );
    });
  }

  it('caches by a key that equals the key of the normalized text written afresh', () => {
    const fingerprinter = new Fingerprinter('mysql');
    fc.assert(
      fc.property(fill(SKELETONS.mysql[3], 'mysql', 3), fill(SKELETONS.mysql[1], 'mysql', 1), (insert, select) => {
        for (const sql of [insert, select]) {
          const out = fingerprinter.run(sql).out;
          const text = out.toString();
          const fresh = new TextBuffer();
          fresh.append(text, 0, text.length, 0);
          expect(out.key()).toBe(fresh.key());
          expect(out.equals(text)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});

const RULES = [
  { table: 'users', column: 'id', map: { kind: 'hash' as const, shards: ['s0', 's1', 's2'] } },
  { table: 'orders', column: 'user_id', map: { kind: 'range' as const, ranges: [{ to: 0n, shard: 'neg' }, { from: 0n, to: 1000n, shard: 'low' }, { from: 1000n, shard: 'high' }] } },
];

/** A key value as a literal in each dialect, and as a typed parameter. */
const keyValue = fc.oneof(
  fc.integer({ min: -5000, max: 5000 }).map((n) => ({ literal: String(n), param: n as number | string | bigint })),
  fc.bigInt({ min: -(2n ** 66n), max: 2n ** 66n }).map((n) => ({ literal: String(n), param: n as number | string | bigint })),
  fc.integer({ min: 0, max: 3000 }).map((n) => ({ literal: `'${n}'`, param: String(n) as number | string | bigint })),
  fc.stringMatching(/^[a-z]{1,8}$/).map((s) => ({ literal: `'${s}'`, param: s as number | string | bigint })),
);

/** Statement shapes over the key values they use, in order; `uses` picks which of n generated keys. */
const SHAPES: { sql: (v: string[]) => string; uses: (n: number) => number[] }[] = [
  { sql: (v) => `SELECT * FROM users WHERE id = ${v[0]}`, uses: () => [0] },
  { sql: (v) => `SELECT name FROM users u WHERE u.id IN (${v.join(', ')}) ORDER BY name`, uses: (n) => [...Array(n).keys()] },
  { sql: (v) => `UPDATE orders SET total = 0 WHERE user_id = ${v[0]} OR user_id = ${v[1]}`, uses: (n) => [0, n - 1] },
  { sql: (v) => `INSERT INTO orders (user_id, total) VALUES ${v.map((x) => `(${x}, 1)`).join(', ')}`, uses: (n) => [...Array(n).keys()] },
  { sql: (v) => `DELETE FROM users WHERE id IN (${v.join(', ')}) AND name = 'x'`, uses: (n) => [...Array(n).keys()] },
];

function summary(route: SqlRoute): unknown {
  const d = route.decision;
  if (d.kind === 'shards') return { shards: d.shards, keys: d.keys.map(String), rows: d.rows?.map((g) => ({ shard: g.shard, rows: g.rows })) };
  if (d.kind === 'reject') return { reject: d.error.code };
  return d;
}

describe('prepared templates route like literal statements', () => {
  for (const dialect of ['mysql', 'postgresql'] as const) {
    it(`${dialect}: binding parameters equals writing the literals in`, () => {
      const router = new SqlRouter({ dialect, shardRules: RULES, multiShard: 'all_shards', cacheSize: 64 });
      fc.assert(
        fc.property(fc.integer({ min: 0, max: SHAPES.length - 1 }), fc.array(keyValue, { minLength: 1, maxLength: 5 }), (shape, keys) => {
          const uses = SHAPES[shape].uses(keys.length);
          const literalSql = SHAPES[shape].sql(uses.map((i) => keys[i].literal));
          const preparedSql = SHAPES[shape].sql(uses.map((i) => (dialect === 'mysql' ? '?' : `$${i + 1}`)));
          const params = dialect === 'mysql' ? uses.map((i) => keys[i].param) : keys.map((k) => k.param);
          const prepared = router.prepare(preparedSql);
          const viaTemplate = router.routePrepared(prepared, params);
          const viaText = router.route(preparedSql, params);
          const literalRoute = router.route(literalSql);
          expect(summary(viaTemplate)).toEqual(summary(literalRoute));
          expect(summary(viaText)).toEqual(summary(literalRoute));
          expect(viaTemplate.classification).toEqual(literalRoute.classification);
        }),
        { numRuns: 400 },
      );
    });
  }
});
