// The BackendKeyData this proxy hands out, and where a CancelRequest carrying one must go.
import { Buffer } from 'node:buffer';
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** What a cancel does for one session: forward it to the backend, or stop the in-flight pooled query. */
export type CancelTarget = () => void;

export interface ProxyKey {
  readonly processId: number;
  readonly secretKey: number;
}

interface Entry {
  readonly secret: Buffer;
  readonly target: CancelTarget;
}

/**
 * Keys are random (31-bit process id, 32-bit secret) and live only while their session does.
 * Sessions whose TLS passes through end to end never showed us the backend's key, so a cancel with
 * an unknown key is offered to the backends those sessions use (a wrong key is ignored there).
 */
export class CancelKeyRegistry {
  private readonly entries = new Map<number, Entry>();
  private readonly passthrough = new Map<string, number>();

  issue(target: CancelTarget): ProxyKey {
    for (;;) {
      const bytes = randomBytes(8);
      const processId = bytes.readUInt32BE(0) & 0x7fffffff;
      if (processId === 0 || this.entries.has(processId)) continue;
      this.entries.set(processId, { secret: bytes.subarray(4), target });
      return { processId, secretKey: bytes.readInt32BE(4) };
    }
  }

  revoke(key: ProxyKey): void {
    this.entries.delete(key.processId);
  }

  /** Runs the target of a matching key; false when no session of this process has it. */
  cancel(processId: number, secretKey: number): boolean {
    const entry = this.entries.get(processId >>> 0);
    if (!entry) return false;
    const given = Buffer.alloc(4);
    given.writeUInt32BE(secretKey >>> 0);
    if (!timingSafeEqual(given, entry.secret)) return false;
    entry.target();
    return true;
  }

  /** A TLS-passthrough session opened to `address`; returns its release. */
  addPassthrough(address: string): () => void {
    this.passthrough.set(address, (this.passthrough.get(address) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.passthrough.get(address) ?? 1) - 1;
      if (left <= 0) this.passthrough.delete(address);
      else this.passthrough.set(address, left);
    };
  }

  /** Backends with TLS-passthrough sessions, for cancels whose key we never issued. */
  passthroughBackends(): string[] {
    return [...this.passthrough.keys()];
  }

  get size(): number {
    return this.entries.size;
  }
}
