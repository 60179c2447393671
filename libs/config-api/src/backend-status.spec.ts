import { withBackendStatus } from './backend-status';

const doc = () => ({
  mysql_backends: [
    { name: 'db1', address: 'h:1', role: 'primary' },
    { name: 'r1', address: 'h:2', role: 'replica', status: 'offline_hard' },
  ],
  postgres_backends: [{ name: 'db1', address: 'h:3', role: 'primary' }],
  redis_backends: [{ name: 'cache', address: 'h:4', role: 'primary', status: 'offline_soft' }],
});

describe('withBackendStatus', () => {
  it('sets status on a copy and leaves the document untouched', () => {
    const original = doc();
    const change = withBackendStatus(original, 'db1', 'offline_soft', 'postgres');
    expect(change).toMatchObject({ kind: 'changed', protocol: 'postgres', previous: 'online' });
    if (change.kind !== 'changed') throw new Error('unreachable');
    expect((change.document['postgres_backends'] as { status?: string }[])[0]?.status).toBe('offline_soft');
    expect((change.document['mysql_backends'] as { status?: string }[])[0]?.status).toBeUndefined();
    expect(original.postgres_backends[0]).not.toHaveProperty('status');
  });

  it('needs the protocol when several protocols have a backend of that name', () => {
    expect(withBackendStatus(doc(), 'db1', 'offline_soft')).toEqual({ kind: 'ambiguous', protocols: ['mysql', 'postgres'] });
  });

  it('answers not_found, unchanged (an absent status is online) and refuses to soften offline_hard', () => {
    expect(withBackendStatus(doc(), 'nope', 'online')).toEqual({ kind: 'not_found' });
    expect(withBackendStatus(doc(), 'db1', 'offline_soft', 'redis')).toEqual({ kind: 'not_found' });
    expect(withBackendStatus(doc(), 'db1', 'online', 'mysql')).toEqual({ kind: 'unchanged', protocol: 'mysql' });
    expect(withBackendStatus(doc(), 'cache', 'offline_soft')).toEqual({ kind: 'unchanged', protocol: 'redis' });
    expect(withBackendStatus(doc(), 'r1', 'offline_soft')).toMatchObject({ kind: 'refused', message: expect.stringContaining('offline_hard') });
    expect(withBackendStatus(doc(), 'r1', 'online')).toMatchObject({ kind: 'changed', previous: 'offline_hard' });
  });
});
