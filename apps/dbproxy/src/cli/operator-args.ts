// Command-line parsing of the operator commands that talk to config-api: status, sessions, pools,
// top, drain, undrain, pause, resume and kill.
import type { Environment } from '@dbproxy/config';

export const OPERATOR_VERBS = ['status', 'sessions', 'pools', 'top', 'drain', 'undrain', 'pause', 'resume', 'kill'] as const;
export type OperatorVerb = (typeof OPERATOR_VERBS)[number];

/** Matches config/dbproxy.example.toml: config_api.listen port 8080 and its admin token. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';
export const DEFAULT_API_TOKEN = 'dev-admin-token-change-me';

export interface OperatorCommand {
  readonly kind: 'operator';
  readonly verb: OperatorVerb;
  /** The backend, edge instance or session the verb acts on. */
  readonly target?: string;
  readonly url: string;
  readonly token: string;
  readonly json: boolean;
  readonly requestTimeoutMs: number;
  /** sessions/pools filters, drain/undrain's protocol. */
  readonly filters: { edge?: string; protocol?: string; user?: string; backend?: string };
  readonly reason?: string;
  /** pause: resume by itself after this many seconds. */
  readonly pauseSeconds?: number;
  /** top: refresh period. */
  readonly intervalMs: number;
}

type Parsed = OperatorCommand | { kind: 'error'; message: string };

const TARGET: Partial<Record<OperatorVerb, string>> = { drain: 'BACKEND', undrain: 'BACKEND', pause: 'EDGE', resume: 'EDGE', kill: 'SESSION' };
const FILTERS: Partial<Record<OperatorVerb, readonly string[]>> = {
  sessions: ['edge', 'protocol', 'user', 'backend'],
  pools: ['edge', 'protocol', 'backend'],
  drain: ['protocol'],
  undrain: ['protocol'],
};
const PROTOCOLS = ['mysql', 'postgres', 'redis'];

export function isOperatorVerb(verb: string): verb is OperatorVerb {
  return (OPERATOR_VERBS as readonly string[]).includes(verb);
}

function positiveNumber(flag: string, text: string | undefined): number | string {
  const n = Number(text);
  return text !== undefined && Number.isFinite(n) && n > 0 ? n : `${flag} needs a positive number of seconds`;
}

export function parseOperatorArgs(verb: OperatorVerb, rest: readonly string[], env: Environment): Parsed {
  const values: Record<string, string> = {};
  const positional: string[] = [];
  let json = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === '--json') {
      json = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const allowed = ['url', 'token', 'request-timeout', ...(FILTERS[verb] ?? []), ...(verb === 'kill' ? ['reason'] : []), ...(verb === 'pause' ? ['timeout'] : []), ...(verb === 'top' ? ['interval'] : [])];
    if (!allowed.includes(flag)) return { kind: 'error', message: `unknown option ${arg} for ${verb}` };
    const value = eq > 0 ? arg.slice(eq + 1) : rest[++i];
    if (value === undefined || value === '') return { kind: 'error', message: `--${flag} needs a value` };
    values[flag] = value;
  }
  const targetName = TARGET[verb];
  if (targetName !== undefined && positional.length !== 1) return { kind: 'error', message: `usage: dbproxy ${verb} ${targetName}` };
  if (targetName === undefined && positional.length > 0) return { kind: 'error', message: `${verb} takes no arguments (got ${positional.join(' ')})` };
  if (values['protocol'] !== undefined && !PROTOCOLS.includes(values['protocol'])) return { kind: 'error', message: `--protocol must be one of ${PROTOCOLS.join(', ')}` };
  const timeout = positiveNumber('--request-timeout', values['request-timeout'] ?? '10');
  const interval = positiveNumber('--interval', values['interval'] ?? '1');
  const pause = values['timeout'] === undefined ? undefined : positiveNumber('--timeout', values['timeout']);
  for (const v of [timeout, interval, pause]) if (typeof v === 'string') return { kind: 'error', message: v };
  const filters: OperatorCommand['filters'] = {};
  for (const key of ['edge', 'protocol', 'user', 'backend'] as const) if (values[key] !== undefined) filters[key] = values[key];
  return {
    kind: 'operator',
    verb,
    ...(positional[0] !== undefined ? { target: positional[0] } : {}),
    url: (values['url'] ?? env['DBPROXY_API_URL'] ?? DEFAULT_API_URL).replace(/\/+$/, ''),
    token: values['token'] ?? env['DBPROXY_API_TOKEN'] ?? DEFAULT_API_TOKEN,
    json,
    requestTimeoutMs: (timeout as number) * 1000,
    filters,
    ...(values['reason'] !== undefined ? { reason: values['reason'] } : {}),
    ...(pause !== undefined ? { pauseSeconds: pause as number } : {}),
    intervalMs: (interval as number) * 1000,
  };
}

export const OPERATOR_USAGE = `operator commands (over config-api: --url URL or DBPROXY_API_URL, default ${DEFAULT_API_URL};
  --token TOKEN or DBPROXY_API_TOKEN, default the example configuration's admin token; --json for JSON):
  dbproxy status                             edges, backends (health, lag, status) and the config epoch
  dbproxy sessions [--edge ID] [--protocol P] [--user U] [--backend B]   client sessions of every edge
  dbproxy pools [--edge ID] [--protocol P] [--backend B]                 backend pools of every edge
  dbproxy top [--interval SECONDS]           live view: sessions and statements/s per edge, pools, backends (q quits)
  dbproxy drain BACKEND [--protocol P]       status offline_soft: no new connections, in-use ones finish
  dbproxy undrain BACKEND [--protocol P]     status online again
  dbproxy pause EDGE [--timeout SECONDS]     hold new statements on an edge instance (a held one fails after SECONDS)
  dbproxy resume EDGE                        run the held statements, take new ones again
  dbproxy kill SESSION [--reason TEXT]       close one client session
  dbproxy --version                          print the version`;
