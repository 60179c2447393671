// Literal and parameter decoding into shard keys: exact integers, both string escape styles, refusals.
import { literalKey, parameterKey } from './literals';
import { tokenize } from './tokenize';
import type { Dialect } from './tokenizer';

function key(literal: string, dialect: Dialect = 'mysql'): unknown {
  const [token] = tokenize(literal, dialect);
  const value = literalKey(literal, token.kind, token.start, token.end, dialect);
  return value.ok ? value.key : `invalid: ${value.reason}`;
}

describe('literalKey', () => {
  it('reads integers exactly', () => {
    expect(key('42')).toBe(42);
    expect(key('-42')).toBe(-42);
    expect(key('- 7'.replace(' ', ''))).toBe(-7);
    expect(key('123456789012345678901234567890')).toBe(123456789012345678901234567890n);
    expect(key('5.000')).toBe(5);
    expect(key('1e3')).toBe(1000);
    expect(key('1_000', 'postgresql')).toBe(1000n);
  });

  it('refuses fractions and binary literals', () => {
    expect(key('5.5')).toMatch(/^invalid: 5.5 is not an integer/);
    expect(key('0x1F')).toMatch(/binary string literal/);
    expect(key("X'1F'")).toMatch(/binary string literal/);
  });

  it('undoes MySQL escapes', () => {
    expect(key(String.raw`'it\'s'`)).toBe("it's");
    expect(key("'a''b'")).toBe("a'b");
    expect(key(String.raw`"tab\there"`)).toBe('tab\there');
    expect(key(String.raw`'50\%'`)).toBe('50\\%');
    expect(key("N'name'")).toBe('name');
  });

  it('reads PostgreSQL standard, E and dollar-quoted strings', () => {
    expect(key(String.raw`'a\b'`, 'postgresql')).toBe('a\\b');
    expect(key("'a''b'", 'postgresql')).toBe("a'b");
    expect(key(String.raw`E'a\nb\x41\u00e9\101'`, 'postgresql')).toBe('a\nbAéA');
    expect(key('$tag$it\'s $$ raw$tag$', 'postgresql')).toBe("it's $$ raw");
    expect(key("U&'d\\0061t'", 'postgresql')).toMatch(/^invalid/);
  });
});

describe('parameterKey', () => {
  it('accepts integers, bigints, strings and UTF-8 bytes', () => {
    expect(parameterKey(7)).toEqual({ ok: true, key: 7 });
    expect(parameterKey(7n)).toEqual({ ok: true, key: 7n });
    expect(parameterKey('eu')).toEqual({ ok: true, key: 'eu' });
    expect(parameterKey(Buffer.from('dé'))).toEqual({ ok: true, key: 'dé' });
  });

  it('refuses NULL, booleans, fractions and dates', () => {
    for (const value of [null, undefined, true, 1.5, new Date(0)]) expect(parameterKey(value).ok).toBe(false);
  });
});
