// CancelKeyRegistry: random keys, exact matching, revocation, TLS-passthrough backends.
import { CancelKeyRegistry } from './cancel-keys';

describe('CancelKeyRegistry', () => {
  it('runs the target of a matching key only', () => {
    const registry = new CancelKeyRegistry();
    const hits: string[] = [];
    const a = registry.issue(() => hits.push('a'));
    const b = registry.issue(() => hits.push('b'));
    expect(a.processId).not.toBe(b.processId);
    expect(registry.cancel(a.processId, a.secretKey ^ 1)).toBe(false);
    expect(registry.cancel(b.processId, b.secretKey)).toBe(true);
    registry.revoke(b);
    expect(registry.cancel(b.processId, b.secretKey)).toBe(false);
    expect(hits).toEqual(['b']);
    expect(registry.size).toBe(1);
  });

  it('counts TLS-passthrough sessions per backend', () => {
    const registry = new CancelKeyRegistry();
    const one = registry.addPassthrough('10.0.0.1:5432');
    const two = registry.addPassthrough('10.0.0.1:5432');
    one();
    one();
    expect(registry.passthroughBackends()).toEqual(['10.0.0.1:5432']);
    two();
    expect(registry.passthroughBackends()).toEqual([]);
  });
});
