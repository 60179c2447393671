import { DEFAULT_ROUTE, HandshakeRoutes, NO_ROUTE } from './handshake-routes';

describe('HandshakeRoutes', () => {
  const routes = new HandshakeRoutes(
    [
      { name: 'orders', database: 'orders', shard: 'a' },
      { name: 'reporting-users', user: 'report_*', shard: 'b' },
      { name: 'tenant', database: 'tenant_*_db', user: 'app', shard: 'b' },
    ],
    undefined,
  );

  it('takes the first route whose every field matches', () => {
    expect(routes.choose('orders', 'report_1')).toEqual({ route: 'orders', shard: 'a', outcome: 'matched' });
    expect(routes.choose('other', 'report_1')).toEqual({ route: 'reporting-users', shard: 'b', outcome: 'matched' });
    expect(routes.choose('tenant_42_db', 'app')?.route).toBe('tenant');
  });

  it('needs both fields of a route to match', () => {
    expect(routes.choose('tenant_42_db', 'other')).toBeNull();
    expect(routes.choose('ORDERS', 'app')).toBeNull();
  });

  it('treats only * as special in a pattern', () => {
    const dotted = new HandshakeRoutes([{ name: 'd', database: 'a.b*', shard: 'a' }], undefined);
    expect(dotted.choose('a.bc', 'u')?.route).toBe('d');
    expect(dotted.choose('axbc', 'u')).toBeNull();
    expect(new HandshakeRoutes([{ name: 'any', database: '*', shard: 'a' }], undefined).choose('', 'u')?.route).toBe('any');
  });

  it('falls back to the default shard, else refuses', () => {
    const withDefault = new HandshakeRoutes([{ name: 'x', database: 'x', shard: 'a' }], 'b');
    expect(withDefault.choose('y', 'u')).toEqual({ route: DEFAULT_ROUTE, shard: 'b', outcome: 'default' });
    expect(withDefault.series()).toEqual([{ route: 'x', outcome: 'matched' }, { route: DEFAULT_ROUTE, outcome: 'default' }]);
    expect(routes.series()[3]).toEqual({ route: NO_ROUTE, outcome: 'refused' });
    expect(routes.choose('', '')).toBeNull();
  });
});
