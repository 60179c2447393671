import { createSnapshot, redactSecrets, restoreRedacted, REDACTED, parseToml, validateDocument } from './index';

describe('secrets', () => {
  const doc = {
    users: [{ name: 'app', password: 'hunter2' }],
    mysql_backends: [{ name: 'p', password: '${DB_PASSWORD}' }],
    config_api: { tokens: [{ name: 'admin', token: 'abcdefghijklmnopqrstuvwxyz' }] },
  };

  it('redacts literal secrets and keeps placeholders', () => {
    const redacted = redactSecrets(doc);
    expect(redacted.users[0]?.password).toBe(REDACTED);
    expect(redacted.config_api.tokens[0]?.token).toBe(REDACTED);
    expect(redacted.mysql_backends[0]?.password).toBe('${DB_PASSWORD}');
    expect(JSON.stringify(redacted)).not.toContain('hunter2');
  });

  it('restores masked secrets from the current document', () => {
    const edited = { ...redactSecrets(doc), users: [{ name: 'app', password: REDACTED }, { name: 'new', password: REDACTED }] };
    const restored = restoreRedacted(edited, doc) as typeof doc;
    expect(restored.users[0]?.password).toBe('hunter2');
    expect(restored.users[1]?.password).toBe(REDACTED); // nothing to restore from: stays masked
    expect(restored.config_api.tokens[0]?.token).toBe('abcdefghijklmnopqrstuvwxyz');
  });
});

describe('snapshots', () => {
  it('are deeply immutable and carry their epoch', () => {
    const parsed = parseToml('[[users]]\nname = "a"\npassword = "b"');
    if (!parsed.ok) throw new Error('parse failed');
    const result = validateDocument(parsed.document, {});
    if (!result.ok) throw new Error('invalid');
    const snapshot = createSnapshot(7, result.config, parsed.document);
    expect(snapshot.epoch).toBe(7);
    expect(Object.isFrozen(snapshot.config.users[0])).toBe(true);
    expect(() => {
      (snapshot.config.users as unknown as { push(x: unknown): void }).push({});
    }).toThrow(/not extensible/);
  });
});
