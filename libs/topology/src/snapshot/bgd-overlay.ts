// Blue/green actions (Subjects.bgdActions) laid over the configured topology of one protocol:
// shunned backends, drains with their deadline, DNS pins by hostname, and moved writers.
import type { BackendRole, BgdAction, TopologySnapshot } from '@dbproxy/bus';
import { pinnedAddress } from '@dbproxy/topology-client';
import { splitAddress, type BackendTarget } from '../targets';

/** Where a backend stands once the actions are applied. */
export interface Placement {
  role: BackendRole;
  shard: string;
  readonly shunned: boolean;
  readonly draining: boolean;
  readonly dnsPin: string | null;
  /** A primary lent to its shard's readers. */
  servesReads: boolean;
  /** The address monitor and pool connections use: the pinned IP, else the configured address. */
  readonly connectAddress: string;
}

interface WriterMove {
  /** The shard's configured primary when the move was made: the move holds while that stays so. */
  readonly configuredPrimary: string | undefined;
  readonly to: string;
}

const hostOf = (address: string) => splitAddress(address).host.toLowerCase();
const configuredPrimaryOf = (targets: readonly BackendTarget[], shard: string) => targets.find((t) => t.shard === shard && t.role === 'primary')?.name;

export class BgdOverlay {
  private readonly shunned = new Set<string>();
  private readonly drains = new Map<string, number>();
  private readonly pins = new Map<string, string>();
  private readonly writers = new Map<string, WriterMove>();
  private readonly lent = new Set<string>();

  /**
   * Applies an action if it concerns these targets; true when the overlay changed. A drain lasts
   * `deadlineMs` from receipt; the other actions last until undone (or, for a moved writer, until
   * the configuration names another primary for the shard).
   */
  apply(action: BgdAction, targets: readonly BackendTarget[], now: number): boolean {
    const known = (name: string) => targets.some((t) => t.name === name);
    switch (action.action) {
      case 'shun':
        if (!known(action.backend) || this.shunned.has(action.backend)) return false;
        this.shunned.add(action.backend);
        return true;
      case 'unshun':
        return this.shunned.delete(action.backend);
      case 'drain-backend':
        // offline backends take no drain (spec 001): offline_soft ones finish on their own, offline_hard ones are closed
        if (!targets.some((t) => t.name === action.backend && t.status === 'online')) return false;
        this.drains.set(action.backend, now + action.deadlineMs);
        return true;
      case 'pin-dns': {
        const host = action.hostname.toLowerCase();
        if (this.pins.get(host) === action.ip || !targets.some((t) => hostOf(t.address) === host)) return false;
        this.pins.set(host, action.ip);
        return true;
      }
      case 'unpin-dns':
        return this.pins.delete(action.hostname.toLowerCase());
      case 'writer-serves-reads':
        if (!known(action.backend)) return false;
        if (action.serves === this.lent.has(action.backend)) return false;
        if (action.serves) this.lent.add(action.backend);
        else this.lent.delete(action.backend);
        return true;
      case 'move-writer': {
        if (!known(action.to)) return false;
        const previous = this.writers.get(action.shard);
        this.writers.set(action.shard, { configuredPrimary: configuredPrimaryOf(targets, action.shard), to: action.to });
        return previous?.to !== action.to;
      }
    }
  }

  /** Restores shuns, pins and moved writers from the last snapshot published before a restart. */
  seed(snapshot: TopologySnapshot, targets: readonly BackendTarget[]): void {
    for (const shard of snapshot.shards) {
      const configuredPrimary = configuredPrimaryOf(targets, shard.shard);
      for (const b of shard.backends) {
        if (!targets.some((t) => t.name === b.name)) continue;
        if (b.shunned) this.shunned.add(b.name);
        if (b.servesReads) this.lent.add(b.name);
        if (b.dnsPin) this.pins.set(hostOf(b.address), b.dnsPin);
        if (b.role === 'primary' && configuredPrimary && configuredPrimary !== b.name) this.writers.set(shard.shard, { configuredPrimary, to: b.name });
      }
    }
  }

  /** The placement of every target at `now`. */
  place(targets: readonly BackendTarget[], now: number): Map<string, Placement> {
    const placements = new Map<string, Placement>();
    for (const t of targets) {
      const dnsPin = this.pins.get(hostOf(t.address)) ?? null;
      const drainUntil = this.drains.get(t.name);
      if (drainUntil !== undefined && drainUntil <= now) this.drains.delete(t.name);
      placements.set(t.name, {
        role: t.role,
        shard: t.shard,
        shunned: this.shunned.has(t.name),
        draining: drainUntil !== undefined && drainUntil > now,
        dnsPin,
        servesReads: false,
        connectAddress: pinnedAddress(t.address, dnsPin),
      });
    }
    for (const [shard, move] of this.writers) this.moveWriter(shard, move, targets, placements);
    for (const name of this.lent) {
      const placement = placements.get(name);
      if (placement?.role === 'primary') placement.servesReads = true;
    }
    return placements;
  }

  /** Describes the overlay for the admin endpoint. */
  describe(): Record<string, unknown> {
    return { shunned: [...this.shunned], draining: Object.fromEntries(this.drains), dnsPins: Object.fromEntries(this.pins), movedWriters: Object.fromEntries(this.writers), writersServingReads: [...this.lent] };
  }

  private moveWriter(shard: string, move: WriterMove, targets: readonly BackendTarget[], placements: Map<string, Placement>): void {
    const to = placements.get(move.to);
    // The configuration changed its mind about this shard's primary (or adopted the move): it wins.
    if (!to || configuredPrimaryOf(targets, shard) !== move.configuredPrimary) {
      this.writers.delete(shard);
      return;
    }
    for (const placement of placements.values()) if (placement.shard === shard && placement.role === 'primary') placement.role = 'replica';
    to.role = 'primary';
    to.shard = shard;
  }
}
