import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusErrors } from '../errors';
import { subjectMatches } from '../subjects';
import { KvRecords, Subjects } from './catalogue';
import type { z } from 'zod';
import { decodeMessage, encodeMessage, type Schema } from './codec';
import type { BgdAction, TopologySnapshot } from './schemas';

const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
const at = '2024-05-01T12:00:00.000Z';

const snapshot: TopologySnapshot = {
  protocol: 'redis',
  generation: 7,
  epoch: 3,
  publishedAt: at,
  shards: [
    {
      shard: 'slots-0',
      slots: [[0, 8191]],
      backends: [
        { name: 'r1', address: '10.0.0.1:6379', role: 'primary', weight: 1, healthy: true, lagging: false, shunned: false, draining: false, dnsPin: null },
        { name: 'r2', address: '[::1]:6380', role: 'replica', weight: 2, healthy: true, lagging: true, shunned: false, draining: false, dnsPin: '10.0.0.9' },
      ],
    },
  ],
};

/** One valid payload per catalogue entry: what each publisher sends. */
const examples: Record<string, { encode: () => Uint8Array; decode: (data: Uint8Array) => boolean }> = {
  health: roundTrip(Subjects.health, {
    protocol: 'mysql',
    backend: 'db1',
    up: true,
    latencyMs: 0.8,
    lagSeconds: 1.5,
    position: '0-1-100',
    roleObserved: 'replica',
    checkedAt: at,
  }),
  topology: roundTrip(Subjects.topology, snapshot),
  topologyRefresh: roundTrip(Subjects.topologyRefresh, { protocol: 'redis', reason: 'moved', requestedBy: 'redis-edge-1', knownGeneration: 6, slot: 42, address: '10.0.0.2:6379' }),
  topologyRefreshReply: roundTrip({ name: 'reply', ...Subjects.topologyRefresh.reply }, snapshot),
  bgdState: roundTrip(Subjects.bgdState, {
    deployment: 'orders',
    phase: 'WRITER_SWITCHOVER_POST_PROCESSING',
    previousPhase: 'WRITER_SWITCHOVER_IN_PROGRESS',
    observedStatus: 'SWITCHOVER_IN_POST_PROCESSING',
    writer: { blue: 'orders-db', green: 'orders-db-green-abc', greenAddress: '10.1.0.5' },
    reason: 'target status advanced',
    changedAt: at,
  }),
  bgdActions: roundTrip(Subjects.bgdActions, { deployment: 'orders', actionId: 'a-1', issuedAt: at, reason: 'post-processing', action: 'pin-dns', hostname: 'orders-db.example', ip: '10.1.0.5' }),
  xaExecute: roundTrip(Subjects.xaExecute, {
    requestedBy: 'mysql-edge-1',
    statement: 'UPDATE accounts SET balance = balance - 1 WHERE id IN (1, 2)',
    participants: [
      { shard: 's1', backend: 'db1' },
      { shard: 's2', backend: 'db2', statement: 'UPDATE accounts SET balance = balance - 1 WHERE id = 2' },
    ],
    deadlineMs: 5000,
  }),
  xaExecuteReply: roundTrip({ name: 'reply', ...Subjects.xaExecute.reply }, {
    xid: 'dbp-1-42',
    decision: 'rollback',
    outcomes: [
      { shard: 's1', backend: 'db1', outcome: 'rolled-back' },
      { shard: 's2', backend: 'db2', outcome: 'failed', error: { code: 'ER_LOCK_DEADLOCK', message: 'Deadlock found', errno: 1213, sqlState: '40001' } },
    ],
  }),
  edgeHeartbeat: roundTrip(Subjects.edgeHeartbeat, {
    instanceId: 'mysql-edge-7f',
    protocol: 'mysql',
    epoch: 12,
    sessions: 340,
    version: '0.1.0',
    adminAddress: '10.0.0.7:9100',
    startedAt: at,
    sentAt: at,
  }),
  edgeAdmin: roundTrip(Subjects.edgeAdmin, { action: 'kill', deadlineMs: 1500, session: 'm-0a1b2c3d4e5f-1', reason: 'maintenance' }),
  edgeAdminReply: roundTrip({ name: 'reply', ...Subjects.edgeAdmin.reply }, {
    protocol: 'postgres',
    paused: false,
    statementsTotal: 42,
    sessions: [{ id: 'p-0a1b2c3d4e5f-2', clientAddress: '10.0.0.3:50412', user: 'app', database: 'shop', listener: 'postgres', state: 'running', statement: 'SELECT pg_sleep(?)', backend: 'pg-primary', pinnedReason: null, epoch: 3, startedAt: 1714564800000, bytesIn: 120, bytesOut: 512 }],
    pools: [{ backend: 'pg-primary', inUse: 1, idle: 2, waiters: 0, checkouts: 9, timeouts: 0, resets: 8, waitMs: { p50: 0.1, p95: 0.4, p99: 2 } }],
  }),
  cacheInvalidate: roundTrip(Subjects.cacheInvalidate, { instanceId: 'mysql-edge-7f', protocol: 'mysql', tables: { 'shop.orders': 41, 'shop.items': 7 } }),
  config: roundTrip(KvRecords.config, { config: { mysql: { listen: '0.0.0.0:6033' } }, hash: 'e3b0c442', author: 'ops@example', appliedAt: at, rollbackOf: 4 }),
  topologyRecord: roundTrip(KvRecords.topology, snapshot),
};

function roundTrip<S extends z.ZodTypeAny>(spec: Schema<S>, payload: z.input<S>) {
  return {
    encode: () => encodeMessage(spec, payload),
    decode: (data: Uint8Array) => decodeMessage(spec, data).ok,
  };
}

describe('subject catalogue', () => {
  it('builds the subjects of DESIGN §3', () => {
    expect(Subjects.health.subject.fill({ protocol: 'mysql', backend: 'db1' })).toBe('dbproxy.health.mysql.db1');
    expect(Subjects.topology.subject.fill({ protocol: 'postgres' })).toBe('dbproxy.topology.postgres');
    expect(Subjects.topologyRefresh.subject.fill({ protocol: 'redis' })).toBe('dbproxy.topology.redis.refresh');
    expect(Subjects.bgdState.subject.fill({ deployment: 'orders' })).toBe('dbproxy.bgd.orders.state');
    expect(Subjects.bgdActions.subject.fill({})).toBe('dbproxy.bgd.actions');
    expect(Subjects.xaExecute.subject.fill({})).toBe('dbproxy.xa.execute');
    expect(Subjects.edgeHeartbeat.subject.fill({})).toBe('dbproxy.edges.heartbeat');
    expect(Subjects.cacheInvalidate.subject.fill({})).toBe('dbproxy.cache.invalidate');
    expect(Subjects.edgeAdmin.subject.fill({ instance: 'edge.1', protocol: 'mysql' })).toBe('dbproxy.edges.edge=2E1.mysql.admin');
    expect([KvRecords.config.bucket, KvRecords.config.key.fill({})]).toEqual(['dbproxy-config', 'current']);
    expect([KvRecords.topology.bucket, KvRecords.topology.key.fill({ protocol: 'redis' })]).toEqual(['dbproxy-topology', 'redis']);
  });

  it('keeps topology snapshots and refresh requests apart under their patterns', () => {
    const snapshots = Subjects.topology.pattern().pattern;
    expect(subjectMatches(snapshots, 'dbproxy.topology.redis')).toBe(true);
    expect(subjectMatches(snapshots, 'dbproxy.topology.redis.refresh')).toBe(false);
    expect(subjectMatches(Subjects.topologyRefresh.pattern().pattern, 'dbproxy.topology.redis')).toBe(false);
    // bgd actions and per-deployment states do not collide either.
    expect(subjectMatches(Subjects.bgdState.pattern().pattern, 'dbproxy.bgd.actions')).toBe(false);
  });

  it.each(Object.keys(examples))('round-trips a valid %s payload', (name) => {
    const example = examples[name];
    expect(example?.decode(example.encode())).toBe(true);
  });

  it('rejects BGD actions with fields of another action', () => {
    const wrong = { deployment: 'orders', actionId: 'a-2', issuedAt: at, reason: 'x', action: 'shun', hostname: 'h' } as unknown as BgdAction;
    expect(() => encodeMessage(Subjects.bgdActions, wrong)).toThrow(expect.objectContaining({ code: 'DBP_ERR_BUS_INVALID_PAYLOAD' }));
  });

  it('documents every subject, record and version in the README', () => {
    for (const spec of Object.values(Subjects)) {
      expect(readme).toContain(`\`${spec.subject.template}\``);
      expect(readme).toContain(`\`Subjects.${spec.name}\``);
    }
    for (const spec of Object.values(KvRecords)) {
      expect(readme).toContain(`\`${spec.bucket}\``);
      expect(readme).toContain(`\`KvRecords.${spec.name}\``);
    }
  });

  it('documents every error code in the README Errors table, each once', () => {
    const codes = Object.values(BusErrors).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(readme.match(new RegExp(`^\\| \`${code}\` \\|`, 'gm'))).toHaveLength(1);
  });
});
