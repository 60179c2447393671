// Cluster redirections and retry errors read from an error reply: MOVED, ASK, TRYAGAIN, CLUSTERDOWN.
import { argEquals } from './args';
import { RespType } from './wire';

export type Redirect =
  | { readonly kind: 'moved' | 'ask'; readonly slot: number; readonly host: string; readonly port: number }
  | { readonly kind: 'tryagain' | 'clusterdown'; readonly message: string };

const SLOTS = 16384;

/**
 * Parses an error message (without the leading '-'): `MOVED 3999 127.0.0.1:6381`,
 * `ASK 3999 [::1]:6381`-style IPv6 (`::1:6381`, split at the last ':'), `TRYAGAIN ...` or
 * `CLUSTERDOWN ...`. An empty host (`MOVED 1 :6381`) means the host the client connected to.
 * Returns undefined for any other error.
 */
export function parseRedirect(message: string): Redirect | undefined {
  if (message.startsWith('TRYAGAIN')) return { kind: 'tryagain', message };
  if (message.startsWith('CLUSTERDOWN')) return { kind: 'clusterdown', message };
  const parts = message.split(' ');
  const kind = parts[0] === 'MOVED' ? 'moved' : parts[0] === 'ASK' ? 'ask' : undefined;
  if (kind === undefined || parts.length !== 3) return undefined;
  const slot = Number(parts[1]);
  const colon = parts[2].lastIndexOf(':');
  const port = Number(parts[2].slice(colon + 1));
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS || colon < 0 || !Number.isInteger(port) || port < 0 || port > 65535) return undefined;
  return { kind, slot, host: parts[2].slice(0, colon), port };
}

/**
 * The redirect in a scanned error reply `buf[start, end)` (`-MOVED ...\r\n`), or undefined.
 * Checks the first word in place, so other errors cost no string.
 */
export function redirectOfReply(buf: Buffer, start: number, end: number): Redirect | undefined {
  if (buf[start] !== RespType.Error || end - start < 6) return undefined;
  const word = start + 1;
  const known =
    argEquals(buf, word, 6, 'MOVED ') ||
    argEquals(buf, word, 4, 'ASK ') ||
    (end - start > 9 && argEquals(buf, word, 8, 'TRYAGAIN')) ||
    (end - start > 12 && argEquals(buf, word, 11, 'CLUSTERDOWN'));
  return known ? parseRedirect(buf.toString('utf8', word, end - 2)) : undefined;
}
