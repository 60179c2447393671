// The reply cache's life in a process: made when [redis.cache] enabled (command mode), following
// configuration changes (disabled: flushed and its trackers closed) and topology changes (the
// master set), and stopped with the service.
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { Logger, MetricsRegistry } from '@dbproxy/observability';
import type { CommandEdge } from '../command/command-edge';
import type { LinkDirectory } from '../command/link-directory';
import { registerCacheMetrics } from './cache-metrics';
import { cacheSettingsOf } from './cache-settings';
import { ReplyCache } from './reply-cache';
import { CacheCounters } from './reply-store';

export class ReplyCacheControl {
  private cache: ReplyCache | undefined;
  private idle = new CacheCounters();

  constructor(
    private readonly edge: CommandEdge,
    private readonly links: LinkDirectory,
    private readonly logger: Logger,
    metrics: MetricsRegistry,
  ) {
    registerCacheMetrics(metrics, {
      counters: () => this.cache?.store.counters ?? this.idle,
      entries: () => this.cache?.store.entries ?? 0,
      bytes: () => this.cache?.store.bytes ?? 0,
      trackers: () => this.cache?.trackerCounts() ?? { ready: 0, total: 0 },
    });
  }

  /** A configuration (at start or a new epoch): the cache is made, reconfigured or stopped. */
  configure(config: DeepReadonly<DbproxyConfig>, listening: boolean): void {
    const settings = cacheSettingsOf(config);
    if (!settings.enabled || !listening) return this.stop();
    if (this.cache) this.cache.configure(settings);
    else this.cache = new ReplyCache(settings, this.links, this.logger, this.edge.flusher);
    this.edge.cache = this.cache;
    this.topologyChanged();
  }

  /** Routes were rebuilt: trackers follow the master set. */
  topologyChanged(): void {
    this.cache?.syncMasters(this.edge.routes.primaries());
  }

  stop(): void {
    if (!this.cache) return;
    this.cache.stop();
    this.idle = this.cache.store.counters;
    this.cache = undefined;
    this.edge.cache = undefined;
  }
}
