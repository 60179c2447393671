import fc from 'fast-check';
import { assertKey, assertKeyPattern, assertPattern, assertSubject, subjectMatches } from './subjects';

describe('subjectMatches', () => {
  it.each([
    ['a.b.c', 'a.b.c', true],
    ['a.*.c', 'a.b.c', true],
    ['a.*.c', 'a.b.d', false],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a.b', true],
    ['a.>', 'a.b.c.d', true],
    ['a.>', 'a', false],
    ['>', 'a', true],
    ['*', 'a.b', false],
    ['*.b.>', 'x.b.c', true],
    ['a.b', 'a.b.c', false],
    ['a.b.c', 'a.b', false],
  ])('%s against %s is %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });

  it('matches a subject with itself, with * in any position and with any > tail', () => {
    const token = fc.stringMatching(/^[a-z0-9_-]{1,6}$/);
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 6 }), fc.nat(), (tokens, n) => {
        const subject = tokens.join('.');
        const i = n % tokens.length;
        const star = tokens.map((t, j) => (j === i ? '*' : t)).join('.');
        const tail = [...tokens.slice(0, i), '>'].join('.');
        return subjectMatches(subject, subject) && subjectMatches(star, subject) && subjectMatches(tail, subject) && !subjectMatches(`${subject}.>`, subject);
      }),
    );
  });
});

describe('syntax checks', () => {
  const invalid = (fn: () => void): void => expect(fn).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' }));

  it('refuses wildcards, empty tokens and whitespace in subjects', () => {
    for (const s of ['', 'a..b', '.a', 'a.', 'a b', 'a.*', 'a.>', 'a*.b', 'a\tb']) invalid(() => assertSubject(s));
    expect(() => assertSubject('dbproxy.health.mysql.db-1')).not.toThrow();
  });

  it('accepts wildcards in patterns only as whole tokens and > only last', () => {
    for (const p of ['a.*', 'a.>', '*.b.>', '>']) expect(() => assertPattern(p)).not.toThrow();
    for (const p of ['a.>.b', 'a.b*', 'a.>x', 'a..*']) invalid(() => assertPattern(p));
  });

  it('applies JetStream KV key rules', () => {
    for (const k of ['current', 'edges/a=b', 'a.b.c', 'mysql']) expect(() => assertKey(k)).not.toThrow();
    for (const k of ['a b', 'a.*', 'ä', '.a', 'a:b']) invalid(() => assertKey(k));
    expect(() => assertKeyPattern('edges.*.>')).not.toThrow();
  });
});
