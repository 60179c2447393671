// What the backends say they are, from their greetings (pooled connections and one probe login per
// backend at start): the version the edge advertises (the default shard primary's, "-dbproxy"
// appended, unless [mysql] server_version is set) and the MariaDB extended capabilities it may offer
// clients (only those every configured backend has: forwarded column definitions carry them).
import { Command, MariaDbCapability, PacketWriter, encodeSimpleCommand, type InitialHandshake } from '@dbproxy/protocol-mysql';
import type { BackendEndpoint, OpenedBackend } from './backend-handshake';

/** Advertised before any backend greeting was seen: MariaDB-like, so clients avoid what MariaDB rejects (mysql2's JSON parameter type). */
export const FALLBACK_SERVER_VERSION = '10.11.0-MariaDB-dbproxy';

/** The MariaDB extended capabilities the edge can forward as the backend sends them. */
export const FORWARDABLE_MARIADB_CAPABILITIES = MariaDbCapability.ExtendedMetadata;

interface Identity {
  readonly serverVersion: string;
  readonly mariaDbCapabilities: number;
}

export class BackendIdentities {
  private readonly seen = new Map<string, Identity>();

  /** A backend greeted a connection of this process. */
  learn(backend: string, handshake: InitialHandshake): void {
    const known = this.seen.get(backend);
    if (known?.serverVersion === handshake.serverVersion && known.mariaDbCapabilities === handshake.mariaDbCapabilities) return;
    this.seen.set(backend, { serverVersion: handshake.serverVersion, mariaDbCapabilities: handshake.mariaDbCapabilities });
  }

  /** `configured` (set explicitly) wins; else the primary's own version with "-dbproxy"; else the fallback. */
  version(configured: string | undefined, primary: string | undefined): string {
    if (configured !== undefined) return configured;
    const known = primary === undefined ? undefined : this.seen.get(primary);
    return known ? `${known.serverVersion}-dbproxy` : FALLBACK_SERVER_VERSION;
  }

  /** The forwardable MariaDB capabilities every one of `backends` offered (0 while any is unknown). */
  mariaDbCapabilities(backends: Iterable<string>): number {
    let common = FORWARDABLE_MARIADB_CAPABILITIES;
    let any = false;
    for (const name of backends) {
      const known = this.seen.get(name);
      if (!known) return 0;
      common &= known.mariaDbCapabilities;
      any = true;
    }
    return any ? common >>> 0 : 0;
  }

  /** Backends whose greeting this process has not seen yet. */
  unknown(backends: Iterable<string>): string[] {
    return [...backends].filter((b) => !this.seen.has(b));
  }
}

/**
 * Logs in to each backend once (the pool's account) to read its greeting, then quits: a complete
 * login, so the server counts no aborted connect. Failures are left to the pools and health checks.
 */
export async function probeBackends(
  endpoints: readonly BackendEndpoint[],
  open: (endpoint: BackendEndpoint, signal: AbortSignal) => Promise<OpenedBackend>,
  identities: BackendIdentities,
  timeoutMs: number,
): Promise<void> {
  await Promise.all(
    endpoints.map(async (endpoint) => {
      try {
        const opened = await open(endpoint, AbortSignal.timeout(timeoutMs));
        identities.learn(endpoint.backend, opened.handshake);
        const w = new PacketWriter(8);
        encodeSimpleCommand(w, Command.Quit);
        opened.socket.end(w.flush());
        setTimeout(() => opened.socket.destroy(), 1000).unref();
      } catch {
        // unreachable now: the first pooled connection to it teaches the same
      }
    }),
  );
}
