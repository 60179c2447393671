// Blue/green actions over the configured topology, and the shards a snapshot is built from.
import type { BgdAction, TopologySnapshot } from '@dbproxy/bus';
import { BackendHealth } from '../health/backend-health';
import type { BackendTarget } from '../targets';
import { BgdOverlay } from './bgd-overlay';
import { buildShards } from './snapshot-builder';

const target = (name: string, role: 'primary' | 'replica', address: string, shard = 'default'): BackendTarget => ({
  protocol: 'mysql',
  name,
  shard,
  role,
  address,
  weight: 1,
  status: 'online',
  maxLagSeconds: 10,
  credentials: {},
  tls: undefined,
});
const TARGETS = [target('blue', 'primary', 'blue.db.internal:3306'), target('blue-r', 'replica', 'blue-r.db.internal:3306'), target('green', 'replica', '10.0.0.9:3306')];
const act = (a: Record<string, unknown>) => ({ deployment: 'bg', actionId: 'x', issuedAt: new Date(0).toISOString(), reason: 'test', ...a }) as BgdAction;

describe('BgdOverlay', () => {
  it('places targets as configured when no action applies', () => {
    const placements = new BgdOverlay().place(TARGETS, 0);
    expect(placements.get('blue')).toEqual({ role: 'primary', shard: 'default', shunned: false, draining: false, dnsPin: null, servesReads: false, connectAddress: 'blue.db.internal:3306' });
  });

  it('shuns and unshuns known backends only', () => {
    const overlay = new BgdOverlay();
    expect(overlay.apply(act({ action: 'shun', backend: 'nobody' }), TARGETS, 0)).toBe(false);
    expect(overlay.apply(act({ action: 'shun', backend: 'blue-r' }), TARGETS, 0)).toBe(true);
    expect(overlay.apply(act({ action: 'shun', backend: 'blue-r' }), TARGETS, 0)).toBe(false);
    expect(overlay.place(TARGETS, 0).get('blue-r')?.shunned).toBe(true);
    expect(overlay.apply(act({ action: 'unshun', backend: 'blue-r' }), TARGETS, 0)).toBe(true);
    expect(overlay.place(TARGETS, 0).get('blue-r')?.shunned).toBe(false);
  });

  it('pins a hostname to an IP: the connect address changes, the configured one stays', () => {
    const overlay = new BgdOverlay();
    expect(overlay.apply(act({ action: 'pin-dns', hostname: 'BLUE.db.internal', ip: '10.0.0.9' }), TARGETS, 0)).toBe(true);
    expect(overlay.apply(act({ action: 'pin-dns', hostname: 'unknown.host', ip: '10.0.0.1' }), TARGETS, 0)).toBe(false);
    expect(overlay.place(TARGETS, 0).get('blue')).toMatchObject({ dnsPin: '10.0.0.9', connectAddress: '10.0.0.9:3306' });
    overlay.apply(act({ action: 'pin-dns', hostname: 'blue.db.internal', ip: 'fd00::9' }), TARGETS, 0);
    expect(overlay.place(TARGETS, 0).get('blue')?.connectAddress).toBe('[fd00::9]:3306');
    expect(overlay.apply(act({ action: 'unpin-dns', hostname: 'blue.db.internal' }), TARGETS, 0)).toBe(true);
    expect(overlay.place(TARGETS, 0).get('blue')?.dnsPin).toBeNull();
  });

  it('takes no drain for an offline backend (spec 001), and publishes every backend\'s status', () => {
    const offline = [target('blue', 'primary', 'blue.db.internal:3306'), { ...target('soft', 'replica', 'soft.db:3306'), status: 'offline_soft' as const }, { ...target('hard', 'replica', 'hard.db:3306'), status: 'offline_hard' as const }];
    const overlay = new BgdOverlay();
    expect(overlay.apply(act({ action: 'drain-backend', backend: 'soft', deadlineMs: 1000 }), offline, 0)).toBe(false);
    expect(overlay.apply(act({ action: 'drain-backend', backend: 'hard', deadlineMs: 1000 }), offline, 0)).toBe(false);
    expect(overlay.apply(act({ action: 'drain-backend', backend: 'blue', deadlineMs: 1000 }), offline, 0)).toBe(true);
    const shards = buildShards(offline, overlay.place(offline, 1), new Map(), new Map());
    expect(shards[0]?.backends.map((b) => [b.name, b.status, b.draining])).toEqual([
      ['blue', 'online', true],
      ['soft', 'offline_soft', false],
      ['hard', 'offline_hard', false],
    ]);
  });

  it('drains a backend until its deadline', () => {
    const overlay = new BgdOverlay();
    overlay.apply(act({ action: 'drain-backend', backend: 'blue-r', deadlineMs: 1000 }), TARGETS, 5_000);
    expect(overlay.place(TARGETS, 5_999).get('blue-r')?.draining).toBe(true);
    expect(overlay.place(TARGETS, 6_000).get('blue-r')?.draining).toBe(false);
  });

  it('moves the writer while the configuration still names the old primary', () => {
    const overlay = new BgdOverlay();
    expect(overlay.apply(act({ action: 'move-writer', shard: 'default', from: 'blue', to: 'green' }), TARGETS, 0)).toBe(true);
    const moved = overlay.place(TARGETS, 0);
    expect([moved.get('blue')?.role, moved.get('green')?.role]).toEqual(['replica', 'primary']);
    // a later configuration makes green the primary itself: the move is dropped, the configuration rules
    const adopted = [target('blue', 'replica', 'blue.db.internal:3306'), target('green', 'primary', '10.0.0.9:3306')];
    expect(overlay.place(adopted, 0).get('green')?.role).toBe('primary');
    expect(overlay.place(TARGETS, 0).get('green')?.role).toBe('replica');
  });

  it('restores shuns, pins and a moved writer from the last published snapshot', () => {
    const snapshot: TopologySnapshot = {
      protocol: 'mysql',
      generation: 7,
      epoch: 1,
      publishedAt: new Date(0).toISOString(),
      shards: [
        {
          shard: 'default',
          backends: [
            { name: 'blue', address: 'blue.db.internal:3306', role: 'replica', weight: 1, healthy: true, lagging: false, shunned: false, draining: false, dnsPin: '10.0.0.9' },
            { name: 'blue-r', address: 'blue-r.db.internal:3306', role: 'replica', weight: 1, healthy: true, lagging: false, shunned: true, draining: false, dnsPin: null },
            { name: 'green', address: '10.0.0.9:3306', role: 'primary', weight: 1, healthy: true, lagging: false, shunned: false, draining: true, dnsPin: null },
          ],
        },
      ],
    };
    const overlay = new BgdOverlay();
    overlay.seed(snapshot, TARGETS);
    const placed = overlay.place(TARGETS, 0);
    expect(placed.get('green')).toMatchObject({ role: 'primary', draining: false });
    expect(placed.get('blue')).toMatchObject({ role: 'replica', connectAddress: '10.0.0.9:3306' });
    expect(placed.get('blue-r')?.shunned).toBe(true);
  });
});

describe('buildShards', () => {
  it('lists shards and backends in configuration order with health, lag and overlay flags', () => {
    const targets = [...TARGETS, target('s2', 'primary', 'h:1', 'shard2')];
    const health = new Map<string, BackendHealth>();
    for (const t of targets) health.set(t.name, new BackendHealth(t.name));
    health.get('blue')?.record({ ok: true, latencyMs: 1, roleObserved: 'primary', position: null, progress: null, replica: null, checkedAt: 0 }, { failuresBeforeDown: 1, successesBeforeUp: 1 });
    const shards = buildShards(targets, new BgdOverlay().place(targets, 0), health, new Map([['shard2', [[0, 16383]] as const]]));
    expect(shards.map((s) => [s.shard, s.slots, s.backends.map((b) => [b.name, b.healthy])])).toEqual([
      ['default', undefined, [['blue', true], ['blue-r', false], ['green', false]]],
      ['shard2', [[0, 16383]], [['s2', false]]],
    ]);
  });
});

describe('BgdOverlay writer-serves-reads', () => {
  it('lends a primary to its readers and returns it; a replica named is not marked', () => {
    const overlay = new BgdOverlay();
    expect(overlay.apply(act({ action: 'writer-serves-reads', shard: 'default', backend: 'blue', serves: true }), TARGETS, 0)).toBe(true);
    expect(overlay.apply(act({ action: 'writer-serves-reads', shard: 'default', backend: 'blue', serves: true }), TARGETS, 0)).toBe(false);
    expect(overlay.place(TARGETS, 0).get('blue')?.servesReads).toBe(true);
    const shards = buildShards(TARGETS, overlay.place(TARGETS, 0), new Map(), new Map());
    expect(shards[0]?.backends.find((b) => b.name === 'blue')?.servesReads).toBe(true);
    expect(overlay.apply(act({ action: 'writer-serves-reads', shard: 'default', backend: 'blue', serves: false }), TARGETS, 0)).toBe(true);
    expect(overlay.place(TARGETS, 0).get('blue')?.servesReads).toBe(false);
    overlay.apply(act({ action: 'writer-serves-reads', shard: 'default', backend: 'blue-r', serves: true }), TARGETS, 0);
    expect(overlay.place(TARGETS, 0).get('blue-r')?.servesReads).toBe(false);
  });
});
