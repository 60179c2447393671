// fast-check generators of SQL-ish text for fuzzing: fragments, arbitrary unicode, and mutated corpus statements.
import fc from 'fast-check';
import { CORPUS } from './corpus';

const SQLISH = [
  ...'abcxyz_019 \t\n\r()[],;.*+-/<>=!~%^&|:#@?$\'"`\\{}',
  'SELECT ', 'FROM ', 'WHERE ', 'IN (', 'VALUES ', 'FOR UPDATE', '--', '/*', '*/', '/*!', "E'", '$$', '$a$', 'N\'', "X'",
  '@@', '::', '?+', 'INSERT INTO t (id) ', 'id = ', ' OR ', ' AND ', 'users', 'orders', '`', '"', 'é', '\u{1F600}', '\ud800',
];

/** Strings built from SQL fragments, plus arbitrary unicode. */
export const sqlish = fc.oneof(
  fc.array(fc.constantFrom(...SQLISH), { maxLength: 60 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constantFrom(...CORPUS.map((c) => c.sql)).chain((sql) =>
    fc.tuple(fc.nat(sql.length), fc.nat(sql.length), fc.constantFrom(...SQLISH)).map(([a, b, insert]) => sql.slice(0, Math.min(a, b)) + insert + sql.slice(Math.max(a, b))),
  ),
);

