import { Readiness } from './readiness';

describe('Readiness', () => {
  it('is ready with no components, degraded when one degrades, unready when one is unready', () => {
    const r = new Readiness();
    expect(r.report()).toMatchObject({ ready: true, status: 'ready', reasons: [] });
    r.set('bus', 'degraded', 'NATS unreachable; serving the last configuration');
    expect(r.report()).toMatchObject({ ready: true, status: 'degraded', reasons: ['bus: degraded (NATS unreachable; serving the last configuration)'] });
    r.set('mysql-edge/primary', 'unready', 'shard default primary down');
    expect(r.report()).toMatchObject({ ready: false, status: 'unready' });
    expect(r.report().reasons).toContain('mysql-edge/primary: unready (shard default primary down)');
    r.set('mysql-edge/primary', 'ready');
    r.remove('bus');
    expect(r.report().ready).toBe(true);
  });
});
