// `dbproxy status|sessions|pools|drain|undrain|pause|resume|kill`: one request (or a few) to
// config-api, printed as aligned tables or, with --json, as the API's JSON.
import { ApiClient, ApiError } from './api-client';
import {
  backendColumns,
  edgeColumns,
  poolColumns,
  sessionColumns,
  unansweredEdges,
  type BackendRow,
  type EdgeAnswer,
  type EdgeRow,
  type PoolsAnswer,
  type SessionsAnswer,
} from './api-views';
import type { OperatorCommand } from './operator-args';
import { formatTable } from './table';

type Print = (line: string) => void;

function query(filters: OperatorCommand['filters']): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) if (value !== undefined) params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

const segment = (value: string) => encodeURIComponent(value);

interface StatusAnswer {
  readonly epoch: number | null;
  readonly edges: EdgeRow[];
  readonly backends: BackendRow[];
  /** The edges' own answers (paused, statements), absent when this config-api has no /v1/pools. */
  readonly edge_answers: EdgeAnswer[] | null;
}

export async function readStatus(api: ApiClient): Promise<StatusAnswer> {
  const [config, edges, backends, pools] = await Promise.all([
    api.optional<{ epoch: number }>('/v1/config'),
    api.get<{ edges: EdgeRow[] }>('/v1/edges'),
    api.get<{ backends: BackendRow[] }>('/v1/backends'),
    api.optional<PoolsAnswer>('/v1/pools'),
  ]);
  return { epoch: config?.epoch ?? null, edges: edges.edges, backends: backends.backends, edge_answers: pools?.edges ?? null };
}

function statusLines(s: StatusAnswer): string[] {
  const answers = s.edge_answers ? new Map(s.edge_answers.map((e) => [`${e.edge}/${e.protocol}`, e])) : undefined;
  const lines = [`config epoch ${s.epoch ?? '(none published)'}`, '', `edges (${s.edges.length})`];
  lines.push(...formatTable(edgeColumns(answers), s.edges), '', `backends (${s.backends.length})`);
  lines.push(...formatTable(backendColumns, s.backends));
  return lines;
}

async function run(command: OperatorCommand, api: ApiClient, out: Print, err: Print): Promise<void> {
  const print = (body: unknown, lines: () => string[]) => {
    if (command.json) out(JSON.stringify(body, null, 2));
    else for (const line of lines()) out(line);
  };
  const target = command.target as string;
  switch (command.verb) {
    case 'status': {
      const status = await readStatus(api);
      return print(status, () => statusLines(status));
    }
    case 'sessions': {
      const answer = await api.get<SessionsAnswer>(`/v1/sessions${query(command.filters)}`);
      for (const line of unansweredEdges(answer.edges)) err(line);
      return print(answer, () => formatTable(sessionColumns, answer.sessions));
    }
    case 'pools': {
      const answer = await api.get<PoolsAnswer>(`/v1/pools${query(command.filters)}`);
      for (const line of unansweredEdges(answer.edges)) err(line);
      return print(answer, () => formatTable(poolColumns, answer.pools));
    }
    case 'drain':
    case 'undrain': {
      const protocol = command.filters.protocol ? `?protocol=${segment(command.filters.protocol)}` : '';
      const answer = await api.post<{ backend: string; protocol: string; status: string; epoch: number; changed: boolean }>(`/v1/backends/${segment(target)}/${command.verb}${protocol}`);
      const what = answer.changed ? `now ${answer.status} (config epoch ${answer.epoch})` : `already ${answer.status} (config epoch ${answer.epoch})`;
      return print(answer, () => [`backend ${answer.backend} (${answer.protocol}): ${what}`]);
    }
    case 'pause':
    case 'resume': {
      const body = command.verb === 'pause' && command.pauseSeconds !== undefined ? { timeout_seconds: command.pauseSeconds } : undefined;
      const answer = await api.post<{ edge: string; paused: boolean }>(`/v1/edges/${segment(target)}/${command.verb}`, body);
      return print(answer, () => [`edge ${answer.edge}: ${answer.paused ? 'paused' : 'resumed'}`]);
    }
    case 'kill': {
      const answer = await api.delete<{ killed: string; edge: string }>(`/v1/sessions/${segment(target)}`, command.reason !== undefined ? { reason: command.reason } : undefined);
      return print(answer, () => [`session ${answer.killed} on edge ${answer.edge}: killed`]);
    }
    case 'top':
      throw new Error('top runs in its own module');
  }
}

/** Runs one operator command; 0 on success, 1 when the API refused or was unreachable. */
export async function operatorCommand(command: OperatorCommand, out: Print, err: Print): Promise<number> {
  const api = new ApiClient({ url: command.url, token: command.token, timeoutMs: command.requestTimeoutMs });
  try {
    await run(command, api, out, err);
    return 0;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    err(`dbproxy ${command.verb}: ${e.message}`);
    return 1;
  }
}
