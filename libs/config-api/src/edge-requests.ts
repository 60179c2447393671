// Asks live edge instances over their admin subject, all at once, each bounded in time: a slow
// or failed edge is reported with its status, never waited for past the timeout.
import { performance } from 'node:perf_hooks';
import { BusErrors, requestMessage, Subjects, type Bus, type EdgeAdminReply, type EdgeAdminRequest, type Protocol } from '@dbproxy/bus';
import type { EdgeInstance } from './edge-registry';

export type EdgeAnswerStatus = 'ok' | 'timeout' | 'error';

export interface EdgeAnswer {
  readonly edge: string;
  readonly protocol: Protocol;
  readonly status: EdgeAnswerStatus;
  readonly elapsedMs: number;
  readonly reply: EdgeAdminReply | null;
}

type RequestBody = EdgeAdminRequest extends infer R ? (R extends unknown ? Omit<R, 'deadlineMs'> : never) : never;

export async function askEdge(bus: Bus, edge: EdgeInstance, request: RequestBody, timeoutMs: number): Promise<EdgeAnswer> {
  const started = performance.now();
  const answer = (status: EdgeAnswerStatus, reply: EdgeAdminReply | null): EdgeAnswer => ({ edge: edge.instanceId, protocol: edge.protocol, status, elapsedMs: Math.round(performance.now() - started), reply });
  try {
    const payload = { ...request, deadlineMs: timeoutMs } as EdgeAdminRequest;
    return answer('ok', await requestMessage(bus, Subjects.edgeAdmin, { instance: edge.instanceId, protocol: edge.protocol }, payload, { timeoutMs }));
  } catch (err) {
    return answer(BusErrors.timeout.is(err) ? 'timeout' : 'error', null);
  }
}

export function askEdges(bus: Bus, edges: readonly EdgeInstance[], request: RequestBody, timeoutMs: number): Promise<EdgeAnswer[]> {
  return Promise.all(edges.map((edge) => askEdge(bus, edge, request, timeoutMs)));
}

/** The `edges` entries of GET /v1/sessions and /v1/pools. */
export function edgeStatusJson(a: EdgeAnswer): Record<string, unknown> {
  return { edge: a.edge, protocol: a.protocol, status: a.status, elapsed_ms: a.elapsedMs, statements_total: a.reply?.statementsTotal ?? 0, paused: a.reply?.paused ?? false };
}
