// Backend status in the edge's view: offline backends take no new work, and what each topology
// change means for existing connections (retirementOf).
import type { TopologyBackend, TopologySnapshot } from '@dbproxy/bus';
import { retirementOf } from './backend-retirement';
import { TopologyView, type BackendState } from './topology-view';

const backend = (name: string, over: Partial<TopologyBackend> = {}): TopologyBackend => ({
  name,
  address: `${name}.db:3306`,
  role: 'replica',
  weight: 1,
  healthy: true,
  lagging: false,
  shunned: false,
  draining: false,
  dnsPin: null,
  ...over,
});
const view = (backends: TopologyBackend[]): TopologyView =>
  TopologyView.of({ protocol: 'mysql', generation: 1, epoch: 1, publishedAt: new Date(0).toISOString(), shards: [{ shard: 's', backends }] } satisfies TopologySnapshot);
const state = (over: Partial<TopologyBackend> = {}): BackendState => view([backend('b', over)]).backend('b') as BackendState;

describe('backend status in the view', () => {
  it('offline_soft and offline_hard backends are not usable, primaries or replicas; absent status reads online', () => {
    const v = view([
      backend('p', { role: 'primary', status: 'offline_soft' }),
      backend('soft', { status: 'offline_soft' }),
      backend('hard', { status: 'offline_hard' }),
      backend('on', { status: 'online' }),
      backend('legacy'),
    ]);
    expect(v.usable('s', 'primary')).toEqual([]);
    expect(v.usable('s', 'replica').map((b) => b.name)).toEqual(['on', 'legacy']);
    expect(v.backend('legacy')?.status).toBe('online');
    expect(v.backend('hard')?.status).toBe('offline_hard');
  });
});

describe('retirementOf', () => {
  it('closes now when a backend goes offline_hard, once', () => {
    expect(retirementOf(state({ status: 'offline_hard' }), state())).toEqual({ reason: 'offline_hard', now: true });
    expect(retirementOf(state({ status: 'offline_hard' }), undefined)).toEqual({ reason: 'offline_hard', now: true });
    expect(retirementOf(state({ status: 'offline_hard' }), state({ status: 'offline_hard' }))).toBeNull();
  });

  it('retires on release when a backend goes offline_soft or starts draining, once', () => {
    expect(retirementOf(state({ status: 'offline_soft' }), state())).toEqual({ reason: 'offline_soft', now: false });
    expect(retirementOf(state({ status: 'offline_soft' }), state({ status: 'offline_soft' }))).toBeNull();
    expect(retirementOf(state({ draining: true }), state())).toEqual({ reason: 'drain', now: false });
    expect(retirementOf(state({ draining: true }), state({ draining: true }))).toBeNull();
  });

  it('retires on release when the backend connects elsewhere (a DNS pin)', () => {
    expect(retirementOf(state({ dnsPin: '10.0.0.9' }), state())).toEqual({ reason: 'address-changed', now: false });
    expect(retirementOf(state(), state())).toBeNull();
    expect(retirementOf(state({ status: 'online' }), state({ status: 'offline_hard' }))).toBeNull();
  });
});
