// Command-line parsing for ./bin/dbproxy: `start [SERVICE...] --config FILE`, `validate --config FILE`,
// `xa ...`, `--version` and the operator commands over config-api (operator-args.ts).
import { processEnvironment } from '@dbproxy/config';
import { isOperatorVerb, OPERATOR_USAGE, parseOperatorArgs, type OperatorCommand } from './operator-args';

export type Command =
  | { kind: 'start'; services: string[]; configPath: string }
  | { kind: 'validate'; configPath: string }
  /** Operator commands of the xa-coordinator, over its admin HTTP. */
  | { kind: 'xa'; action: 'list' | 'commit' | 'rollback'; xid?: string; configPath: string; admin?: string }
  /** Internal: a worker process of an edge, forked by its primary. */
  | { kind: 'worker'; service: string; configPath: string }
  /** status, sessions, pools, top, drain, undrain, pause, resume, kill. */
  | OperatorCommand
  | { kind: 'version' }
  /** `usage`: a bare `dbproxy`, which prints the usage to stderr and exits 2. */
  | { kind: 'help' }
  | { kind: 'usage' }
  | { kind: 'error'; message: string };

export const USAGE = `usage:
  dbproxy start [SERVICE...] --config FILE   start the named services (all when none) in this process
  dbproxy validate --config FILE             check a configuration; exit 0, or 2 listing every problem
  dbproxy xa list --config FILE [--admin HOST:PORT]         in-doubt XA branches on every MySQL primary
  dbproxy xa commit|rollback XID --config FILE [--admin HOST:PORT]   settle one by hand
services: config-api, topology, mysql-edge, pg-edge, redis-edge, bgd-monitor, xa-coordinator
${OPERATOR_USAGE}`;

export function parseArgs(argv: readonly string[]): Command {
  const [verb, ...rest] = argv;
  if (verb === undefined) return { kind: 'usage' };
  if (verb === 'help' || verb === '--help' || verb === '-h') return { kind: 'help' };
  if (verb === '--version' || verb === '-V' || verb === 'version') return { kind: 'version' };
  if (isOperatorVerb(verb)) return parseOperatorArgs(verb, rest, processEnvironment());
  let configPath: string | undefined;
  let admin: string | undefined;
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === '--config' || arg === '-c') {
      configPath = rest[++i];
      if (configPath === undefined) return { kind: 'error', message: `${arg} needs a file` };
    } else if (arg === '--admin' && verb === 'xa') {
      admin = rest[++i];
      if (admin === undefined) return { kind: 'error', message: '--admin needs HOST:PORT' };
    } else if (arg.startsWith('--config=')) {
      configPath = arg.slice('--config='.length);
    } else if (arg.startsWith('-')) {
      return { kind: 'error', message: `unknown option ${arg}` };
    } else {
      positional.push(arg);
    }
  }
  if (configPath === undefined) return { kind: 'error', message: '--config FILE is required' };
  if (verb === 'start') return { kind: 'start', services: positional, configPath };
  if (verb === 'worker') {
    if (positional.length !== 1) return { kind: 'error', message: 'worker takes exactly one service' };
    return { kind: 'worker', service: positional[0] as string, configPath };
  }
  if (verb === 'xa') return parseXa(positional, configPath, admin);
  if (verb === 'validate') {
    if (positional.length > 0) return { kind: 'error', message: `validate takes no arguments besides --config (got ${positional.join(' ')})` };
    return { kind: 'validate', configPath };
  }
  return { kind: 'error', message: `unknown command ${verb}` };
}

function parseXa(positional: readonly string[], configPath: string, admin: string | undefined): Command {
  const [action, xid, ...extra] = positional;
  const base = { kind: 'xa' as const, configPath, ...(admin === undefined ? {} : { admin }) };
  if (action === 'list' && xid === undefined) return { ...base, action };
  if ((action === 'commit' || action === 'rollback') && xid !== undefined && extra.length === 0) return { ...base, action, xid };
  return { kind: 'error', message: 'usage: xa list | xa commit XID | xa rollback XID' };
}
