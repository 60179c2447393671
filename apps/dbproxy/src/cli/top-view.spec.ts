// dbproxy top's screen from two samples in the shapes config-api answers (CONTRACT-21).
import type { BackendRow, EdgeAnswer, EdgeRow, PoolRow, SessionRow } from './api-views';
import { renderTop, type TopSample } from './top-view';

const edge = (id: string, protocol: string, sessions: number): EdgeRow => ({ instance_id: id, protocol, epoch: 4, sessions, version: '0.1.0', last_seen: '2026-01-01T00:00:00.000Z' });
const answer = (id: string, protocol: string, total: number, paused = false): EdgeAnswer => ({ edge: id, protocol, status: 'ok', elapsed_ms: 3, statements_total: total, paused });
const backend = (name: string, role: string, lag: number | null): BackendRow => ({
  name, protocol: 'mysql', address: '10.0.0.1:3306', role, shard: 'default', status: role === 'replica' ? 'offline_soft' : 'online', health: 'up', latency_ms: 1.25, lag_seconds: lag, checked_at: null, error: null,
});
const pool = (edgeId: string, name: string, inUse: number, waiters: number): PoolRow => ({
  edge: edgeId, protocol: 'mysql', backend: name, in_use: inUse, idle: 1, waiters, checkouts: 10, timeouts: 0, resets: 0, wait_ms: { p50: 0.1, p95: 0.5, p99: 1 },
});
const session = (id: string, edgeId: string, age: number): SessionRow => ({
  id, edge: edgeId, protocol: 'mysql', client_address: '127.0.0.1:5000', user: 'app', database: 'app', listener: 'read_write', state: 'active', statement: 'SELECT SLEEP(?)', backend: 'db1', pinned_reason: null, epoch: 4, age_seconds: age, bytes_in: 10, bytes_out: 20,
});

function sample(at: number, totals: [number, number], paused = false): TopSample {
  const edges = [answer('e1', 'mysql', totals[0]), answer('e2', 'mysql', totals[1], paused)];
  return {
    at,
    epoch: 4,
    edges: [edge('e1', 'mysql', 9), edge('e2', 'mysql', 9)],
    backends: [backend('db1', 'primary', null), backend('r1', 'replica', 0.5)],
    pools: { edges, pools: [pool('e1', 'db1', 2, 1), pool('e2', 'db1', 3, 0), pool('e1', 'r1', 0, 0)] },
    sessions: { edges, sessions: [session('s1', 'e1', 5), session('s2', 'e1', 50), session('s3', 'e2', 1)] },
  };
}

describe('renderTop', () => {
  const screen = { width: 120, height: 40 };

  it('computes statements per second per edge from the statements_total deltas', () => {
    const lines = renderTop('http://api', sample(12_000, [1500, 40], true), sample(10_000, [1000, 40]), screen);
    expect(lines[0]).toMatch(/^dbproxy top {2}http:\/\/api {2}config epoch 4 {2}00:00:12 UTC/);
    const e1 = lines.find((l) => l.startsWith('e1 ')) as string;
    const e2 = lines.find((l) => l.startsWith('e2 ')) as string;
    // sessions counted from /v1/sessions (the heartbeat's 9 is older), 500 statements in 2 s
    expect(e1.split(/\s+/)).toEqual(['e1', 'mysql', '4', '2', '250.0', 'no']);
    expect(e2.split(/\s+/)).toEqual(['e2', 'mysql', '4', '1', '0.0', 'yes']);
  });

  it('shows no rate on the first sample, sums pools per backend over the edges, and lists the oldest sessions first', () => {
    const lines = renderTop('http://api', sample(10_000, [1000, 40]), undefined, screen);
    expect((lines.find((l) => l.startsWith('e1 ')) as string).split(/\s+/)[4]).toBe('-');
    expect((lines.find((l) => l.startsWith('db1 ')) as string).split(/\s+/)).toEqual(['db1', 'mysql', 'primary', 'online', 'up', '-', '1.3ms', '5', '2', '1']);
    expect((lines.find((l) => l.startsWith('r1 ')) as string).split(/\s+/)).toEqual(['r1', 'mysql', 'replica', 'offline_soft', 'up', '0.5s', '1.3ms', '0', '1', '0']);
    const ids = lines.filter((l) => /^s\d /.test(l)).map((l) => l.split(' ')[0]);
    expect(ids).toEqual(['s2', 's1', 's3']);
  });

  it('fits the screen: no line wider than it, sessions cut to the rows left', () => {
    const lines = renderTop('http://api', sample(10_000, [1000, 40]), undefined, { width: 40, height: 14 });
    expect(lines).toHaveLength(14);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(40);
    expect(lines.some((l) => l.startsWith('sessions: 3 ('))).toBe(true);
  });

  it('shows no pool figures and says so when the edges did not answer', () => {
    const s = sample(10_000, [0, 0]);
    const silent = { ...answer('e1', 'mysql', 0), status: 'timeout' as const };
    const lines = renderTop('http://api', { ...s, pools: { edges: [silent], pools: [] }, sessions: { edges: [silent], sessions: [] } }, undefined, screen);
    expect((lines.find((l) => l.startsWith('db1 ')) as string).split(/\s+/).slice(-3)).toEqual(['-', '-', '-']);
    expect(lines).toContain('sessions: 0 (1 edge instance(s) did not answer)');
    expect((lines.find((l) => l.startsWith('e1 ')) as string).split(/\s+/)).toEqual(['e1', 'mysql', '4', '9', '-', '(timeout)']);
  });

  it('says when config-api has no session or pool routes', () => {
    const { pools: _p, sessions: _s, ...bare } = sample(10_000, [0, 0]);
    const lines = renderTop('http://api', bare, undefined, screen, 'config-api at http://api is unreachable');
    expect(lines[1]).toBe('! config-api at http://api is unreachable');
    expect(lines).toContain('sessions: this config-api has no /v1/sessions');
    expect((lines.find((l) => l.startsWith('e1 ')) as string).split(/\s+/)).toEqual(['e1', 'mysql', '4', '9', '-', '-']);
  });
});
