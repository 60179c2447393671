// Which backend serves a shard in a role right now: configured backends (credentials, TLS) joined
// with the topology service's view (health, shunning, draining, DNS pins), and the replica choice,
// which skips for a while a replica this process just failed to connect to (before topology notices).
import { performance } from 'node:perf_hooks';
import type { DeepReadonly, PostgresBackendConfig } from '@dbproxy/config';
import { ReplicaSelector, type ReplicaCandidate } from '@dbproxy/routing';
import type { BackendState, TopologyView } from '@dbproxy/topology-client';
import { PgEdgeErrors } from './errors';

export type BackendConfig = DeepReadonly<PostgresBackendConfig>;

/** A backend picked for one connection: its configuration and where to connect now. */
export interface BackendTarget {
  readonly config: BackendConfig;
  /** `host:port` to dial: the DNS-pinned address during a switchover, else the configured one. */
  readonly connectAddress: string;
  readonly role: 'primary' | 'replica';
}

/** How busy each backend is, for the lowest-pressure band of the replica choice. */
export interface BackendLoad {
  load(backend: string): { inUse: number; waiters: number; capacity: number };
}

export interface BackendChoice {
  readonly target: BackendTarget | undefined;
  /** True when a read-only connection went to the primary because no replica was usable. */
  readonly fellBack: boolean;
}

const NO_CHOICE: BackendChoice = Object.freeze({ target: undefined, fellBack: false });

export class BackendDirectory {
  private readonly selector: ReplicaSelector;
  private readonly byName: ReadonlyMap<string, BackendConfig>;
  /** Replicas this process could not connect to, until when (performance.now() ms). */
  private readonly unreachable = new Map<string, number>();

  constructor(
    private readonly backends: readonly BackendConfig[],
    private readonly topology: () => TopologyView,
    pressureMargin: number,
    /** How long a replica that refused a connection is skipped: until the health checks had time to judge it. */
    private readonly unreachableMs = 2_000,
  ) {
    this.selector = new ReplicaSelector({ margin: pressureMargin });
    this.byName = new Map(backends.map((b) => [b.name, b]));
  }

  config(name: string): BackendConfig | undefined {
    return this.byName.get(name);
  }

  /** The shard's usable primary (healthy, not shunned), or undefined. */
  primary(shard: string): BackendTarget | undefined {
    return this.primaryChoice(shard, this.topology(), false).target;
  }

  /** The view the cached choices below were made from: a new view (topology changed) empties them. */
  private cachedView: TopologyView | undefined;
  private readonly primaryChoices = new Map<string, BackendChoice>();
  private readonly fallbackChoices = new Map<string, BackendChoice>();

  /**
   * The primary as a choice (`fellBack`: for a read without a usable replica), made once per
   * topology view and shard: every unit of a primary-only shard asks for it.
   */
  private primaryChoice(shard: string, view: TopologyView, fellBack: boolean): BackendChoice {
    if (view !== this.cachedView) {
      this.cachedView = view;
      this.primaryChoices.clear();
      this.fallbackChoices.clear();
    }
    const cache = fellBack ? this.fallbackChoices : this.primaryChoices;
    let choice = cache.get(shard);
    if (choice === undefined) {
      let target: BackendTarget | undefined;
      for (const state of view.usable(shard, 'primary')) {
        target = this.targetOf(state, 'primary');
        if (target) break;
      }
      choice = { target, fellBack };
      if (cache.size < 1024) cache.set(shard, choice);
    }
    return choice;
  }

  /**
   * A usable replica by weight within the lowest pressure band; the primary when none and `fallback`.
   * With `prefer` (causal reads: replicas known to have replayed the session's commit), only those while any is usable.
   */
  replica(shard: string, load: BackendLoad, fallback: boolean, prefer?: (backend: string) => boolean): BackendChoice {
    const view = this.topology();
    const usable = view.usable(shard, 'replica');
    if (usable.length === 0) return fallback ? this.primaryChoice(shard, view, true) : NO_CHOICE;
    const candidates: ReplicaCandidate[] = [];
    const targets = new Map<string, BackendTarget>();
    for (const state of usable) {
      const target = this.targetOf(state, 'replica');
      if (!target || this.isUnreachable(state.name)) continue;
      targets.set(state.name, target);
      const figures = load.load(state.name);
      candidates.push({ name: state.name, weight: state.weight, inUse: figures.inUse, waiters: figures.waiters, capacity: Math.max(1, figures.capacity) });
    }
    const preferred = prefer !== undefined && candidates.length > 1 ? candidates.filter((c) => prefer(c.name)) : [];
    const name = preferred.length > 0 ? this.selector.pick(preferred) : candidates.length > 0 ? this.selector.pick(candidates) : undefined;
    if (name !== undefined) return { target: targets.get(name), fellBack: false };
    if (!fallback) return NO_CHOICE;
    return this.primaryChoice(shard, view, true);
  }

  /** A connect to `name` failed before anything was sent: replica choices skip it for a while. */
  markUnreachable(name: string): void {
    this.unreachable.set(name, performance.now() + this.unreachableMs);
  }

  private isUnreachable(name: string): boolean {
    if (this.unreachable.size === 0) return false;
    const until = this.unreachable.get(name);
    if (until === undefined) return false;
    if (until > performance.now()) return true;
    this.unreachable.delete(name);
    return false;
  }

  /** The target for a role, or a typed error naming what is missing. */
  require(shard: string, role: 'primary' | 'replica', load: BackendLoad, fallback: boolean, prefer?: (backend: string) => boolean): BackendChoice {
    const choice = role === 'primary' ? this.primaryChoice(shard, this.topology(), false) : this.replica(shard, load, fallback, prefer);
    if (!choice.target) throw PgEdgeErrors.noBackend(role, shard);
    return choice;
  }

  /** Database every backend of the shard serves (config validation keeps them equal). */
  databaseOf(shard: string): string | undefined {
    return this.backends.find((b) => b.shard === shard)?.database;
  }

  /** Every configured backend with its topology state (GET /postgres/backends). */
  describe(): { config: BackendConfig; state: BackendState | undefined }[] {
    const view = this.topology();
    return this.backends.map((config) => ({ config, state: view.backend(config.name) }));
  }

  private targetOf(state: BackendState, role: 'primary' | 'replica'): BackendTarget | undefined {
    const config = this.config(state.name);
    if (!config) return undefined;
    return { config, connectAddress: state.connectAddress, role };
  }
}
