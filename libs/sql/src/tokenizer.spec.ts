// Tokenizer: comments, quoting and escapes per dialect, numbers, placeholders, variables, errors.
import { Kw } from './keywords';
import { tokenize } from './tokenize';
import { Tok, type Dialect, type TokKind } from './tokenizer';

const kinds = (sql: string, dialect: Dialect = 'mysql'): [TokKind, string][] => tokenize(sql, dialect).map((t) => [t.kind, t.text]);

describe('tokenize: comments', () => {
  it('recognizes MySQL -- only before whitespace, and # comments', () => {
    expect(kinds('SELECT 1 -- hi\n, 2 # there')).toEqual([
      [Tok.Word, 'SELECT'],
      [Tok.Number, '1'],
      [Tok.Comment, '-- hi'],
      [Tok.Comma, ','],
      [Tok.Number, '2'],
      [Tok.Comment, '# there'],
    ]);
    expect(kinds('SELECT 5--1')).toEqual([
      [Tok.Word, 'SELECT'],
      [Tok.Number, '5'],
      [Tok.Operator, '-'],
      [Tok.Number, '-1'],
    ]);
    expect(kinds('SELECT 1 --')).toContainEqual([Tok.Comment, '--']);
  });

  it('treats -- as a comment and # as an operator in PostgreSQL', () => {
    expect(kinds('SELECT 5--1', 'postgresql')).toEqual([
      [Tok.Word, 'SELECT'],
      [Tok.Number, '5'],
      [Tok.Comment, '--1'],
    ]);
    expect(kinds("SELECT a #> '{x}'", 'postgresql').map((t) => t[0])).toEqual([Tok.Word, Tok.Word, Tok.Operator, Tok.String]);
  });

  it('nests block comments in PostgreSQL only', () => {
    expect(kinds('/* a /* b */ c */ SELECT', 'postgresql')).toEqual([
      [Tok.Comment, '/* a /* b */ c */'],
      [Tok.Word, 'SELECT'],
    ]);
    expect(kinds('/* a /* b */ c', 'mysql')).toEqual([
      [Tok.Comment, '/* a /* b */'],
      [Tok.Word, 'c'],
    ]);
  });

  it('reads the content of MySQL executable comments as SQL', () => {
    expect(kinds('/*!40101 SET NAMES utf8 */; /*M!100100 SELECT 1*/ /*+ BKA(t) */')).toEqual([
      [Tok.Word, 'SET'],
      [Tok.Word, 'NAMES'],
      [Tok.Word, 'utf8'],
      [Tok.Semicolon, ';'],
      [Tok.Word, 'SELECT'],
      [Tok.Number, '1'],
      [Tok.Comment, '/*+ BKA(t) */'],
    ]);
    expect(kinds('/*!SELECT*/ FOR UPDATE').map((t) => t[1])).toEqual(['SELECT', 'FOR', 'UPDATE']);
  });
});

describe('tokenize: strings and identifiers', () => {
  it('handles MySQL backslash escapes, doubled quotes and double-quoted strings', () => {
    expect(kinds(String.raw`SELECT 'it\'s', 'a''b', "say \"x\"", '\\'`).filter((t) => t[0] === Tok.String).map((t) => t[1])).toEqual([
      String.raw`'it\'s'`,
      `'a''b'`,
      String.raw`"say \"x\""`,
      String.raw`'\\'`,
    ]);
  });

  it('uses standard strings in PostgreSQL, with E-strings for backslash escapes', () => {
    expect(kinds(String.raw`SELECT 'a\', E'b\'c', e'd'`, 'postgresql').filter((t) => t[0] === Tok.String).map((t) => t[1])).toEqual([
      String.raw`'a\'`,
      String.raw`E'b\'c'`,
      `e'd'`,
    ]);
  });

  it('reads dollar-quoted strings with and without tags', () => {
    expect(kinds("SELECT $$it's$$, $fn$ a $$ b $fn$, $1", 'postgresql')).toEqual([
      [Tok.Word, 'SELECT'],
      [Tok.String, "$$it's$$"],
      [Tok.Comma, ','],
      [Tok.String, '$fn$ a $$ b $fn$'],
      [Tok.Comma, ','],
      [Tok.Placeholder, '$1'],
    ]);
  });

  it('reads quoted identifiers per dialect', () => {
    expect(kinds('SELECT `a``b`, "c"')).toEqual([
      [Tok.Word, 'SELECT'],
      [Tok.QuotedIdent, '`a``b`'],
      [Tok.Comma, ','],
      [Tok.String, '"c"'],
    ]);
    expect(kinds('SELECT "a""b", U&"d\\0061"', 'postgresql').filter((t) => t[0] === Tok.QuotedIdent).map((t) => t[1])).toEqual([
      '"a""b"',
      'U&"d\\0061"',
    ]);
  });

  it('reads prefixed literals', () => {
    expect(kinds("SELECT X'1F', b'101', N'x', _utf8mb4'y'").filter((t) => t[0] !== Tok.Comma)).toEqual([
      [Tok.Word, 'SELECT'],
      [Tok.HexNumber, "X'1F'"],
      [Tok.BitString, "b'101'"],
      [Tok.String, "N'x'"],
      [Tok.Word, '_utf8mb4'],
      [Tok.String, "'y'"],
    ]);
  });
});

describe('tokenize: numbers, placeholders, variables, operators', () => {
  it('reads decimal, float, hex and bit numbers', () => {
    expect(kinds('SELECT 1, 1.5, .5, 1e10, 2.5E-3, 0x1F, 0b101').filter((t) => t[0] !== Tok.Comma).slice(1)).toEqual([
      [Tok.Number, '1'],
      [Tok.Number, '1.5'],
      [Tok.Number, '.5'],
      [Tok.Number, '1e10'],
      [Tok.Number, '2.5E-3'],
      [Tok.HexNumber, '0x1F'],
      [Tok.BitString, '0b101'],
    ]);
  });

  it('signs a number only where no operand precedes it', () => {
    expect(kinds('SELECT a-1, -1, a - - 2, (+3), x=-4, 5 -6').map((t) => t[1])).toEqual([
      'SELECT', 'a', '-', '1', ',', '-1', ',', 'a', '-', '- 2', ',', '(', '+3', ')', ',', 'x', '=', '-4', ',', '5', '-', '6',
    ]);
    expect(kinds('UPDATE t SET value = value + 1').map((t) => t[1])).toEqual(['UPDATE', 't', 'SET', 'value', '=', 'value', '+', '1']);
  });

  it('treats MySQL words that start with digits as identifiers', () => {
    expect(kinds('SELECT * FROM 1abc')).toContainEqual([Tok.Word, '1abc']);
  });

  it('reads placeholders, and jsonb ? operators in PostgreSQL', () => {
    expect(kinds('SELECT ? , $2').filter((t) => t[0] === Tok.Placeholder).map((t) => t[1])).toEqual(['?', '$2']);
    expect(kinds("SELECT data ? 'k', data ?| $1 FROM t WHERE id = ?", 'postgresql').filter((t) => t[0] === Tok.Placeholder || t[0] === Tok.Operator).map((t) => t[1])).toEqual([
      '?', '?|', '$1', '=', '?',
    ]);
  });

  it('reads MySQL user and system variables', () => {
    expect(kinds("SELECT @x, @@session.sql_mode, @'a b', @@version").filter((t) => t[0] === Tok.Variable).map((t) => t[1])).toEqual([
      '@x',
      '@@session.sql_mode',
      "@'a b'",
      '@@version',
    ]);
  });

  it('reads multi-character operators', () => {
    expect(kinds("SELECT a<=>b, c->>'$.x', d::int, e||f, g:=1", 'mysql').filter((t) => t[0] === Tok.Operator).map((t) => t[1])).toEqual([
      '<=>', '->>', '::', '||', ':=',
    ]);
  });

  it('marks keywords case-insensitively', () => {
    const [select, star, from] = tokenize('sElEcT * FROM', 'mysql');
    expect(select.keyword).toBe(Kw.SELECT);
    expect(star.keyword).toBe(0);
    expect(from.keyword).toBe(Kw.FROM);
  });
});

describe('tokenize: errors', () => {
  it.each([
    ["SELECT 'abc", 'string', 7],
    ['SELECT `abc', 'quoted identifier', 7],
    ['SELECT /* abc', 'comment', 7],
    ["SELECT 'it\\'", 'string', 7],
  ])('reports %s as unterminated %s', (sql, what, at) => {
    expect(() => tokenize(sql, 'mysql')).toThrow(expect.objectContaining({ code: 'DBP_ERR_SQL_UNTERMINATED', args: [what, at] }));
  });

  it('reports unterminated PostgreSQL dollar quotes and nested comments', () => {
    expect(() => tokenize('SELECT $a$ x $b$', 'postgresql')).toThrow(expect.objectContaining({ args: ['dollar-quoted string', 7] }));
    expect(() => tokenize('/* /* */', 'postgresql')).toThrow(expect.objectContaining({ args: ['comment', 0] }));
  });
});
