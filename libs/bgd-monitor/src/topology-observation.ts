// What one poll of mysql.rds_topology saw, and its blue/green classification (spec 001 "Topology
// Recognition"): decided from the first row alone; the target row's status drives the phases.

/** One row of `SELECT id, endpoint, port, role, status, version FROM mysql.rds_topology`. */
export interface TopologyRow {
  readonly id: string | null;
  readonly endpoint: string | null;
  readonly port: number | null;
  readonly role: string | null;
  readonly status: string | null;
  readonly version: string | null;
}

export const SOURCE_ROLE = 'BLUE_GREEN_DEPLOYMENT_SOURCE';
export const TARGET_ROLE = 'BLUE_GREEN_DEPLOYMENT_TARGET';

/** The outcomes of one poll, kept distinct in metrics and logs. */
export type PollOutcome =
  | { readonly kind: 'absent'; readonly detail: string }
  | { readonly kind: 'empty' }
  | { readonly kind: 'query-error'; readonly detail: string }
  | { readonly kind: 'rows'; readonly rows: readonly TopologyRow[]; readonly columns: readonly string[] };

/** A poll that returned rows, classified. */
export type Classified =
  | { readonly blueGreen: false; readonly why: string }
  | { readonly blueGreen: true; readonly source: TopologyRow | undefined; readonly target: (TopologyRow & { readonly status: string }) | undefined };

/** Blue/green when the role and status columns exist and both first-row cells are non-NULL (empty strings count). */
export function classify(rows: readonly TopologyRow[], columns: readonly string[]): Classified {
  const first = rows[0];
  if (!first) return { blueGreen: false, why: 'no rows' };
  if (!columns.includes('role') || !columns.includes('status')) return { blueGreen: false, why: 'no role/status columns' };
  if (first.role === null || first.status === null) return { blueGreen: false, why: 'first row has a NULL role or status' };
  return { blueGreen: true, source: rows.find((r) => r.role === SOURCE_ROLE), target: rows.find((r): r is TopologyRow & { status: string } => r.role === TARGET_ROLE && r.status !== null) };
}

/** A short description of a poll for GET /bgd and the logs. */
export function describeOutcome(outcome: PollOutcome): Record<string, unknown> {
  if (outcome.kind !== 'rows') return { ...outcome };
  return { kind: 'rows', rows: outcome.rows.map((r) => ({ endpoint: r.endpoint, port: r.port, role: r.role, status: r.status })) };
}
