// What `dbproxy top` shows: one sample of config-api's edges, backends, pools and sessions, and
// the screen lines made from it and the sample before (statements per second from the deltas).
import type { ApiClient } from './api-client';
import type { BackendRow, EdgeRow, PoolRow, PoolsAnswer, SessionRow, SessionsAnswer } from './api-views';
import { fit, formatSeconds, formatTable, orDash, type Column } from './table';

export interface TopSample {
  readonly at: number;
  readonly epoch: number | null;
  readonly edges: readonly EdgeRow[];
  readonly backends: readonly BackendRow[];
  /** Absent when this config-api has no /v1/pools or /v1/sessions. */
  readonly pools?: PoolsAnswer;
  readonly sessions?: SessionsAnswer;
}

export async function takeSample(api: ApiClient, now: () => number = Date.now): Promise<TopSample> {
  const [config, edges, backends, pools, sessions] = await Promise.all([
    api.optional<{ epoch: number }>('/v1/config'),
    api.get<{ edges: EdgeRow[] }>('/v1/edges'),
    api.get<{ backends: BackendRow[] }>('/v1/backends'),
    api.optional<PoolsAnswer>('/v1/pools'),
    api.optional<SessionsAnswer>('/v1/sessions'),
  ]);
  return {
    at: now(),
    epoch: config?.epoch ?? null,
    edges: edges.edges,
    backends: backends.backends,
    ...(pools ? { pools } : {}),
    ...(sessions ? { sessions } : {}),
  };
}

const key = (edge: string, protocol: string) => `${edge}/${protocol}`;

function statementTotals(sample: TopSample | undefined): Map<string, number> {
  const totals = new Map<string, number>();
  for (const e of [...(sample?.sessions?.edges ?? []), ...(sample?.pools?.edges ?? [])]) {
    if (e.status === 'ok') totals.set(key(e.edge, e.protocol), Math.max(totals.get(key(e.edge, e.protocol)) ?? 0, e.statements_total));
  }
  return totals;
}

interface EdgeLine {
  readonly edge: EdgeRow;
  readonly sessions: number;
  readonly rate: number | null;
  readonly paused: string;
}

function edgeLines(sample: TopSample, previous: TopSample | undefined): EdgeLine[] {
  const now = statementTotals(sample);
  const before = statementTotals(previous);
  const seconds = previous ? (sample.at - previous.at) / 1000 : 0;
  const counted = new Map<string, number>();
  for (const s of sample.sessions?.sessions ?? []) counted.set(key(s.edge, s.protocol), (counted.get(key(s.edge, s.protocol)) ?? 0) + 1);
  const answers = new Map([...(sample.pools?.edges ?? []), ...(sample.sessions?.edges ?? [])].map((e) => [key(e.edge, e.protocol), e]));
  return sample.edges.map((edge) => {
    const k = key(edge.instance_id, edge.protocol);
    const [total, last] = [now.get(k), before.get(k)];
    const rate = total !== undefined && last !== undefined && seconds > 0 && total >= last ? (total - last) / seconds : null;
    const answer = answers.get(k);
    const paused = answer === undefined ? '-' : answer.status !== 'ok' ? `(${answer.status})` : answer.paused ? 'yes' : 'no';
    return { edge, sessions: sample.sessions && answer?.status === 'ok' ? (counted.get(k) ?? 0) : edge.sessions, rate, paused };
  });
}

interface BackendLine {
  readonly backend: BackendRow;
  readonly pool: { in_use: number; idle: number; waiters: number } | null;
}

function backendLines(sample: TopSample): BackendLine[] {
  const pools = new Map<string, { in_use: number; idle: number; waiters: number }>();
  for (const p of sample.pools?.pools ?? ([] as PoolRow[])) {
    const sum = pools.get(key(p.backend, p.protocol)) ?? { in_use: 0, idle: 0, waiters: 0 };
    pools.set(key(p.backend, p.protocol), { in_use: sum.in_use + p.in_use, idle: sum.idle + p.idle, waiters: sum.waiters + p.waiters });
  }
  // no edge of the backend's protocol answered: nothing is known of its pools
  const answered = new Set((sample.pools?.edges ?? []).filter((e) => e.status === 'ok').map((e) => e.protocol));
  return sample.backends.map((backend) => ({ backend, pool: answered.has(backend.protocol) ? (pools.get(key(backend.name, backend.protocol)) ?? { in_use: 0, idle: 0, waiters: 0 }) : null }));
}

const right = 'right' as const;
const edgeColumns: Column<EdgeLine>[] = [
  { header: 'EDGE', cell: (l) => l.edge.instance_id },
  { header: 'PROTOCOL', cell: (l) => l.edge.protocol },
  { header: 'EPOCH', cell: (l) => String(l.edge.epoch), align: right },
  { header: 'SESSIONS', cell: (l) => String(l.sessions), align: right },
  { header: 'STMT/S', cell: (l) => (l.rate === null ? '-' : l.rate.toFixed(1)), align: right },
  { header: 'PAUSED', cell: (l) => l.paused },
];
const poolCell = (l: BackendLine, field: 'in_use' | 'idle' | 'waiters') => (l.pool === null ? '-' : String(l.pool[field]));
const backendColumns: Column<BackendLine>[] = [
  { header: 'BACKEND', cell: (l) => l.backend.name },
  { header: 'PROTOCOL', cell: (l) => l.backend.protocol },
  { header: 'ROLE', cell: (l) => l.backend.role },
  { header: 'STATUS', cell: (l) => l.backend.status },
  { header: 'HEALTH', cell: (l) => l.backend.health },
  { header: 'LAG', cell: (l) => (l.backend.lag_seconds === null ? '-' : `${l.backend.lag_seconds.toFixed(1)}s`), align: right },
  { header: 'LATENCY', cell: (l) => (l.backend.latency_ms === null ? '-' : `${l.backend.latency_ms.toFixed(1)}ms`), align: right },
  { header: 'IN_USE', cell: (l) => poolCell(l, 'in_use'), align: right },
  { header: 'IDLE', cell: (l) => poolCell(l, 'idle'), align: right },
  { header: 'WAITERS', cell: (l) => poolCell(l, 'waiters'), align: right },
];
const sessionColumns: Column<SessionRow>[] = [
  { header: 'SESSION', cell: (s) => s.id },
  { header: 'EDGE', cell: (s) => s.edge },
  { header: 'USER', cell: (s) => s.user },
  { header: 'CLIENT', cell: (s) => s.client_address },
  { header: 'STATE', cell: (s) => s.state },
  { header: 'BACKEND', cell: (s) => orDash(s.backend) },
  { header: 'AGE', cell: (s) => formatSeconds(s.age_seconds), align: right },
  { header: 'STATEMENT', cell: (s) => orDash(s.statement) },
];

export interface Screen {
  readonly width: number;
  readonly height: number;
}

/** The screen's lines: header, edges, backends, then as many sessions (oldest first) as fit. */
export function renderTop(source: string, sample: TopSample, previous: TopSample | undefined, screen: Screen, problem?: string): string[] {
  const clock = new Date(sample.at).toISOString().slice(11, 19);
  const lines = [`dbproxy top  ${source}  config epoch ${sample.epoch ?? '-'}  ${clock} UTC  (q quits)`, problem ? `! ${problem}` : ''];
  lines.push(...formatTable(edgeColumns, edgeLines(sample, previous)), '');
  lines.push(...formatTable(backendColumns, backendLines(sample)), '');
  if (sample.sessions) {
    const sessions = [...sample.sessions.sessions].sort((a, b) => b.age_seconds - a.age_seconds);
    const room = Math.max(0, screen.height - lines.length - 2);
    const silent = sample.sessions.edges.filter((e) => e.status !== 'ok').length;
    lines.push(`sessions: ${sessions.length}${sessions.length > room ? ` (${room} shown)` : ''}${silent > 0 ? ` (${silent} edge instance(s) did not answer)` : ''}`);
    if (room > 0) lines.push(...formatTable(sessionColumns, sessions.slice(0, room)));
  } else {
    lines.push('sessions: this config-api has no /v1/sessions');
  }
  return lines.slice(0, screen.height).map((l) => fit(l, screen.width));
}
