// The object a borrower holds: one connection, once, with where it came from and how long it waited.
import type { BackendPool } from './backend-pool';
import { PoolErrors } from './errors';
import type { PooledConnection } from './pooled-connection';
import type { Lease } from './types';

/** Implementation of Lease; its extra fields are for BackendPool only (index.ts exports the interface). */
export class PoolLease<C> implements Lease<C> {
  released = false;
  /** Set when a drain deadline closed the connection under the borrower; release is then a no-op. */
  revoked = false;

  constructor(
    readonly pool: BackendPool<C>,
    readonly entry: PooledConnection<C>,
    readonly reserved: boolean,
    readonly waitMs: number,
  ) {}

  get backend(): string {
    return this.entry.pool;
  }

  get connectionId(): number {
    return this.entry.id;
  }

  get retiring(): boolean {
    return this.entry.state === 'retiring' || this.entry.state === 'closed';
  }

  get connection(): C {
    const raw = this.entry.raw;
    if (this.released || raw === undefined) throw PoolErrors.leaseReleased(this.entry.pool, this.entry.id);
    return raw;
  }
}
