import fc from 'fast-check';
import { z } from 'zod';
import { assertKey, assertSubject } from '../subjects';
import { decodeMessage, encodeMessage } from './codec';
import { decodeToken, defineMessage, encodeToken, SubjectTemplate } from './spec';

describe('SubjectTemplate', () => {
  const health = new SubjectTemplate('dbproxy.health.{protocol}.{backend}');

  it('fills parameters, builds patterns and reads parameters back', () => {
    expect(health.fill({ protocol: 'mysql', backend: 'db1' })).toBe('dbproxy.health.mysql.db1');
    expect(health.pattern()).toBe('dbproxy.health.*.*');
    expect(health.pattern({ protocol: 'redis' })).toBe('dbproxy.health.redis.*');
    expect(health.parse('dbproxy.health.pg.replica-2')).toEqual({ protocol: 'pg', backend: 'replica-2' });
    expect(health.parse('dbproxy.health.pg')).toBeUndefined();
    expect(health.parse('dbproxy.topology.pg.x')).toBeUndefined();
  });

  it('escapes parameters into one token valid in subjects and KV keys, and reads them back', () => {
    const subject = health.fill({ protocol: 'mysql', backend: 'db.1' });
    expect(subject).toBe('dbproxy.health.mysql.db=2E1');
    expect(() => assertSubject(subject)).not.toThrow();
    expect(() => assertKey(encodeToken('a.b*c>d e=f/ü'))).not.toThrow();
    expect(health.parse(subject)).toEqual({ protocol: 'mysql', backend: 'db.1' });
    expect(health.pattern({ backend: '>' })).toBe('dbproxy.health.*.=3E');
    for (const value of ['plain', 'db.1', '*', '>', '=3E', 'ünï cødé', 'a=b.c']) expect(decodeToken(encodeToken(value))).toBe(value);
    expect(() => health.fill({ protocol: 'mysql', backend: '' })).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_SUBJECT' }));
  });

  it('round-trips any non-empty parameter', () => {
    fc.assert(fc.property(fc.string({ minLength: 1, unit: 'grapheme' }), (value) => decodeToken(encodeToken(value)) === value));
  });
});

describe('message codec', () => {
  const spec = defineMessage('sample', 'sample.{id}', 2, z.object({ count: z.number().int() }));
  const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

  it('wraps the payload in a versioned envelope and decodes it back', () => {
    const data = encodeMessage(spec, { count: 3 });
    expect(new TextDecoder().decode(data)).toBe('{"v":2,"count":3}');
    expect(decodeMessage(spec, data)).toEqual({ ok: true, value: { count: 3 } });
  });

  it('classifies malformed input instead of throwing', () => {
    const reasons = ['{', '[1]', 'null', '{"count":1}', '{"v":1,"count":1}', '{"v":2,"count":"1"}', '\xff'].map((s) => {
      const result = decodeMessage(spec, s === '\xff' ? new Uint8Array([0xff]) : bytes(s));
      return result.ok ? 'ok' : result.reason;
    });
    expect(reasons).toEqual(['malformed-json', 'malformed-json', 'malformed-json', 'unsupported-version', 'unsupported-version', 'schema-mismatch', 'malformed-json']);
  });

  it('refuses to encode an invalid payload', () => {
    expect(() => encodeMessage(spec, { count: 1.5 })).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_PAYLOAD' }));
  });
});
