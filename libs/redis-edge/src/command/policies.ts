// Command-mode policy by command: what the proxy answers itself, which commands change replayable
// connection state, and which it refuses because their connection semantics cannot survive
// shared or lazily opened backend connections. Everything else follows COMMAND INFO.
import { CommandFlag, Handling } from './command-flags';

export interface Overlay {
  readonly handling: number;
  readonly reason: string;
}

/** A shared connection redirects its invalidations to one client id only: the proxy's tracker (src/cache). */
const NO_CLIENT_TRACKING = "shared backend connections redirect their tracking to the proxy's own reply cache ([redis.cache]), so a client cannot track keys through them; use connection mode for client-side caching";
const SHARED_CONNECTIONS = 'it acts on the backend connection, which the proxy shares between clients';

const BY_NAME: Readonly<Record<string, Overlay>> = {
  ping: { handling: Handling.Local, reason: '' },
  echo: { handling: Handling.Local, reason: '' },
  quit: { handling: Handling.Local, reason: '' },
  reset: { handling: Handling.Local, reason: '' },
  'client|id': { handling: Handling.Local, reason: '' },
  'client|getname': { handling: Handling.Local, reason: '' },
  'client|setinfo': { handling: Handling.Local, reason: '' },
  hello: { handling: Handling.State, reason: '' },
  auth: { handling: Handling.State, reason: '' },
  select: { handling: Handling.State, reason: '' },
  'client|setname': { handling: Handling.State, reason: '' },
  multi: { handling: Handling.Transaction, reason: '' },
  exec: { handling: Handling.Transaction, reason: '' },
  discard: { handling: Handling.Transaction, reason: '' },
  watch: { handling: Handling.Transaction, reason: '' },
  unwatch: { handling: Handling.Transaction, reason: '' },
  subscribe: { handling: Handling.PubSub, reason: '' },
  psubscribe: { handling: Handling.PubSub, reason: '' },
  ssubscribe: { handling: Handling.PubSub, reason: '' },
  unsubscribe: { handling: Handling.PubSub, reason: '' },
  punsubscribe: { handling: Handling.PubSub, reason: '' },
  sunsubscribe: { handling: Handling.PubSub, reason: '' },
  scan: { handling: Handling.Scan, reason: '' },
  publish: { handling: Handling.Publish, reason: '' },
  'script|kill': { handling: Handling.Kill, reason: '' },
  'function|kill': { handling: Handling.Kill, reason: '' },
  xread: { handling: Handling.BlockingIfBlock, reason: '' },
  xreadgroup: { handling: Handling.BlockingIfBlock, reason: '' },
  monitor: { handling: Handling.Rejected, reason: 'it streams every command the server runs, from every client' },
  'client|tracking': { handling: Handling.Rejected, reason: NO_CLIENT_TRACKING },
  'client|caching': { handling: Handling.Rejected, reason: NO_CLIENT_TRACKING },
  'client|reply': { handling: Handling.Rejected, reason: 'the proxy matches every reply to its command, so replies cannot be switched off' },
  readonly: { handling: Handling.Rejected, reason: 'the proxy chooses replicas itself (use the read-only listener)' },
  readwrite: { handling: Handling.Rejected, reason: 'the proxy chooses replicas itself (use the read-only listener)' },
  asking: { handling: Handling.Rejected, reason: 'the proxy follows cluster redirects itself' },
  sync: { handling: Handling.Rejected, reason: 'replication streams need a direct connection' },
  psync: { handling: Handling.Rejected, reason: 'replication streams need a direct connection' },
  replconf: { handling: Handling.Rejected, reason: 'replication streams need a direct connection' },
};

/** The policy for a command (or subcommand, with its parent's spec) before COMMAND INFO flags apply. */
export function overlayFor(name: string, flags: number, parent: { readonly name: string; readonly handling: number; readonly reason: string } | undefined): Overlay {
  const named = BY_NAME[name];
  if (named) return named;
  if (name === 'cluster' || parent?.name === 'cluster') return { handling: Handling.ClusterCommand, reason: '' };
  if (parent?.name === 'client') return { handling: Handling.Rejected, reason: SHARED_CONNECTIONS };
  if ((flags & CommandFlag.Admin) !== 0) return { handling: Handling.Administrative, reason: '' };
  if ((flags & CommandFlag.Blocking) !== 0) return { handling: Handling.Blocking, reason: '' };
  return { handling: Handling.Forward, reason: '' };
}
