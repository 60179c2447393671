// Startup settings checked and spelled as PostgreSQL spells them (what SHOW returns and the
// ParameterStatus a client is greeted with), learnt once per value on a pooled connection, and
// interned: sessions asking for the same settings share one object, which a pooled connection
// compares by identity before each unit (no work when it already has them).
import type { EdgeEpoch } from '../edge-context';
import { PgEdgeErrors } from '../errors';
import type { TransactionPools } from './backend-pools';
import { canonicalizingQuery, type RequestedSettings } from './startup-parameters';

const CACHE_LIMIT = 4096;

/** The backend refused a value: the client gets PostgreSQL's own error (FATAL at startup, as the server would). */
export class SettingRefused extends Error {
  constructor(
    readonly sqlState: string,
    message: string,
  ) {
    super(message);
  }
}

export class SessionSettings {
  /** `name\0value` → the value as PostgreSQL spells it. */
  private readonly spelled = new Map<string, string>();
  private readonly interned = new Map<string, ReadonlyMap<string, string>>();

  constructor(private readonly pools: TransactionPools) {}

  /** The session's settings, canonical and interned; throws SettingRefused for a value the server refuses. */
  async resolve(epoch: EdgeEpoch, shard: string, requested: RequestedSettings): Promise<ReadonlyMap<string, string>> {
    const unknown = new Map([...requested].filter(([name, value]) => !this.spelled.has(`${name}\0${value}`)));
    if (unknown.size > 0) await this.learn(epoch, shard, unknown);
    const settings = new Map([...requested].map(([name, value]) => [name, this.spelled.get(`${name}\0${value}`) ?? value]));
    const key = JSON.stringify([...settings].sort(([a], [b]) => (a < b ? -1 : 1)));
    let shared = this.interned.get(key);
    if (!shared) {
      if (this.interned.size >= CACHE_LIMIT) this.interned.clear();
      shared = settings;
      this.interned.set(key, shared);
    }
    return shared;
  }

  private async learn(epoch: EdgeEpoch, shard: string, settings: RequestedSettings): Promise<void> {
    const target = epoch.directory.primary(shard) ?? epoch.directory.replica(shard, this.pools, true).target;
    if (!target) throw PgEdgeErrors.noBackend('primary', shard);
    const { sql, names } = canonicalizingQuery(settings);
    const lease = await this.pools.acquire(target.config.name, false);
    let answer: Awaited<ReturnType<typeof lease.connection.firstRow>>;
    try {
      answer = await lease.connection.firstRow(sql, names.flatMap((name) => [name, settings.get(name) ?? '']), epoch.config.postgres.query_timeout_seconds * 1000);
    } catch (err) {
      this.pools.release(lease, false, 'settings-check-failed');
      throw err;
    }
    this.pools.release(lease, true);
    if ('error' in answer) throw new SettingRefused(answer.error.code, answer.error.message);
    if (this.spelled.size >= CACHE_LIMIT) this.spelled.clear();
    names.forEach((name, i) => this.spelled.set(`${name}\0${settings.get(name) ?? ''}`, answer.row[i] ?? ''));
  }
}
