// The config-api answers the operator commands read (shapes of /work CONTRACT-21: snake_case
// keys) and the tables they are printed as.
import { formatSeconds, orDash, type Column } from './table';

export interface EdgeRow {
  readonly instance_id: string;
  readonly protocol: string;
  readonly epoch: number;
  readonly sessions: number;
  readonly version: string;
  readonly last_seen: string;
}

/** An edge instance's answer inside /v1/sessions and /v1/pools. */
export interface EdgeAnswer {
  readonly edge: string;
  readonly protocol: string;
  readonly status: 'ok' | 'timeout' | 'error';
  readonly elapsed_ms: number;
  readonly statements_total: number;
  readonly paused: boolean;
}

export interface BackendRow {
  readonly name: string;
  readonly protocol: string;
  readonly address: string;
  readonly role: string;
  readonly shard: string;
  readonly status: string;
  readonly health: string;
  readonly latency_ms: number | null;
  readonly lag_seconds: number | null;
  readonly checked_at: string | null;
  readonly error: string | null;
}

export interface SessionRow {
  readonly id: string;
  readonly edge: string;
  readonly protocol: string;
  readonly client_address: string;
  readonly user: string;
  readonly database: string;
  readonly listener: string;
  readonly state: string;
  readonly statement: string | null;
  readonly backend: string | null;
  readonly pinned_reason: string | null;
  readonly epoch: number;
  readonly age_seconds: number;
  readonly bytes_in: number;
  readonly bytes_out: number;
}

export interface PoolRow {
  readonly edge: string;
  readonly protocol: string;
  readonly backend: string;
  readonly in_use: number;
  readonly idle: number;
  readonly waiters: number;
  readonly checkouts: number;
  readonly timeouts: number;
  readonly resets: number;
  readonly wait_ms: { readonly p50: number; readonly p95: number; readonly p99: number };
}

export interface SessionsAnswer {
  readonly edges: EdgeAnswer[];
  readonly sessions: SessionRow[];
}

export interface PoolsAnswer {
  readonly edges: EdgeAnswer[];
  readonly pools: PoolRow[];
}

const right = 'right' as const;
const ms = (n: number | null) => (n === null ? '-' : `${n < 10 ? n.toFixed(1) : Math.round(n)}ms`);
const lag = (n: number | null) => (n === null ? '-' : `${n < 10 ? n.toFixed(1) : Math.round(n)}s`);

export const backendColumns: Column<BackendRow>[] = [
  { header: 'BACKEND', cell: (b) => b.name },
  { header: 'PROTOCOL', cell: (b) => b.protocol },
  { header: 'ADDRESS', cell: (b) => b.address },
  { header: 'ROLE', cell: (b) => b.role },
  { header: 'SHARD', cell: (b) => b.shard },
  { header: 'STATUS', cell: (b) => b.status },
  { header: 'HEALTH', cell: (b) => b.health },
  { header: 'LAG', cell: (b) => lag(b.lag_seconds), align: right },
  { header: 'LATENCY', cell: (b) => ms(b.latency_ms), align: right },
  { header: 'ERROR', cell: (b) => orDash(b.error) },
];

/** Edges of `status`: the heartbeat registry joined with the edges' own answers (paused). */
export function edgeColumns(answers: ReadonlyMap<string, EdgeAnswer> | undefined): Column<EdgeRow>[] {
  return [
    { header: 'EDGE', cell: (e) => e.instance_id },
    { header: 'PROTOCOL', cell: (e) => e.protocol },
    { header: 'EPOCH', cell: (e) => String(e.epoch), align: right },
    { header: 'SESSIONS', cell: (e) => String(e.sessions), align: right },
    { header: 'PAUSED', cell: (e) => pausedCell(answers?.get(`${e.instance_id}/${e.protocol}`)) },
    { header: 'VERSION', cell: (e) => e.version },
  ];
}

function pausedCell(answer: EdgeAnswer | undefined): string {
  if (answer === undefined) return '-';
  if (answer.status !== 'ok') return `(${answer.status})`;
  return answer.paused ? 'yes' : 'no';
}

export const sessionColumns: Column<SessionRow>[] = [
  { header: 'ID', cell: (s) => s.id },
  { header: 'EDGE', cell: (s) => s.edge },
  { header: 'PROTOCOL', cell: (s) => s.protocol },
  { header: 'CLIENT', cell: (s) => s.client_address },
  { header: 'USER', cell: (s) => s.user },
  { header: 'DATABASE', cell: (s) => orDash(s.database) },
  { header: 'STATE', cell: (s) => s.state },
  { header: 'BACKEND', cell: (s) => orDash(s.backend) },
  { header: 'PINNED', cell: (s) => orDash(s.pinned_reason) },
  { header: 'EPOCH', cell: (s) => String(s.epoch), align: right },
  { header: 'AGE', cell: (s) => formatSeconds(s.age_seconds), align: right },
  { header: 'IN', cell: (s) => String(s.bytes_in), align: right },
  { header: 'OUT', cell: (s) => String(s.bytes_out), align: right },
  { header: 'STATEMENT', cell: (s) => orDash(s.statement) },
];

export const poolColumns: Column<PoolRow>[] = [
  { header: 'EDGE', cell: (p) => p.edge },
  { header: 'PROTOCOL', cell: (p) => p.protocol },
  { header: 'BACKEND', cell: (p) => p.backend },
  { header: 'IN_USE', cell: (p) => String(p.in_use), align: right },
  { header: 'IDLE', cell: (p) => String(p.idle), align: right },
  { header: 'WAITERS', cell: (p) => String(p.waiters), align: right },
  { header: 'CHECKOUTS', cell: (p) => String(p.checkouts), align: right },
  { header: 'TIMEOUTS', cell: (p) => String(p.timeouts), align: right },
  { header: 'RESETS', cell: (p) => String(p.resets), align: right },
  { header: 'WAIT_P50', cell: (p) => ms(p.wait_ms.p50), align: right },
  { header: 'WAIT_P95', cell: (p) => ms(p.wait_ms.p95), align: right },
  { header: 'WAIT_P99', cell: (p) => ms(p.wait_ms.p99), align: right },
];

/** One line per edge instance that did not answer (the listing is then partial). */
export function unansweredEdges(edges: readonly EdgeAnswer[]): string[] {
  return edges.filter((e) => e.status !== 'ok').map((e) => `dbproxy: edge ${e.edge} (${e.protocol}) did not answer: ${e.status} after ${e.elapsed_ms} ms; the list is partial`);
}
