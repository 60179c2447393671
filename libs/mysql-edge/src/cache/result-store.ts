// The Redis/Valkey side of the MySQL result cache: one connection per edge process to the
// [[redis_backends]] entry [mysql.cache] redis_backend names. A lookup reads the tables'
// generations and the entry in one MGET (so a lookup never uses a generation older than the last
// bump the server applied, in one round trip); a bump INCRs generations in one MULTI.
import { Buffer } from 'node:buffer';
import { splitAddress } from '@dbproxy/observability';
import Redis from 'ioredis';

const PREFIX = 'dbproxy:mysql:cache';
/**
 * Redis commands answer within this or the connection is dropped (commands fail, the cache is
 * bypassed until it is back). Checked by one interval timer: ioredis's per-command commandTimeout
 * costs a timer per lookup, which measured as much as the lookup saved.
 */
const COMMAND_TIMEOUT_MS = 1000;
const WATCHDOG_MS = 250;

/**
 * An entry is stored under its statement's key alone, its value the generations it was filled
 * under, a newline, then the result's packets. A lookup is one MGET of the tables' generations and
 * the entry (one command: Redis reads them atomically, no script to run); the entry is a hit only
 * when the generations it carries are the ones read with it.
 */
const SEPARATOR = 0x0a;

export interface StoreTarget {
  readonly address: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly db: number;
}

export interface Lookup {
  /** The generations read, joined: part of the entry's key. */
  readonly generations: string;
  readonly value: Buffer | null;
}

export function generationKey(table: string): string {
  return `${PREFIX}:gen:${table}`;
}

function entryKey(base: string): string {
  return `${PREFIX}:entry:${base}`;
}

export class ResultStore {
  private readonly redis: Redis;
  private inFlight = 0;
  /** When a reply last came, or the first command went out after none was in flight. */
  private progressAt = 0;
  private readonly watchdog: NodeJS.Timeout;

  constructor(target: StoreTarget, onStatus: () => void) {
    const { address: host, port } = splitAddress(target.address);
    this.redis = new Redis({
      host,
      port,
      db: target.db,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: (times) => Math.min(100 * times, 2000),
    });
    this.redis.on('ready', onStatus);
    this.redis.on('close', onStatus);
    this.redis.on('error', () => onStatus());
    this.redis.connect().catch(() => onStatus());
    this.watchdog = setInterval(() => {
      if (this.inFlight > 0 && Date.now() - this.progressAt > COMMAND_TIMEOUT_MS) this.redis.disconnect(true);
    }, WATCHDOG_MS);
    this.watchdog.unref();
  }

  private async timed<T>(command: Promise<T>): Promise<T> {
    if (this.inFlight++ === 0) this.progressAt = Date.now();
    try {
      return await command;
    } finally {
      this.inFlight--;
      this.progressAt = Date.now();
    }
  }

  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  async lookup(tables: readonly string[], base: string): Promise<Lookup> {
    const replies = await this.timed(this.redis.mgetBuffer(...tables.map(generationKey), entryKey(base)));
    const entry = replies[tables.length] ?? null;
    const generations = replies
      .slice(0, tables.length)
      .map((g) => (g === null ? '0' : g.toString('latin1')))
      .join('.');
    if (entry === null) return { generations, value: null };
    const cut = entry.indexOf(SEPARATOR);
    const current = cut === generations.length && entry.toString('latin1', 0, cut) === generations;
    return { generations, value: current ? entry.subarray(cut + 1) : null };
  }

  /** Stores `value` as the entry of `base` filled under `generations` (replacing any other generation's). */
  async store(base: string, generations: string, value: Buffer, ttlSeconds: number): Promise<void> {
    const header = Buffer.from(`${generations}\n`, 'latin1');
    await this.timed(this.redis.set(entryKey(base), Buffer.concat([header, value]), 'EX', ttlSeconds));
  }

  /** INCRs every table's generation; resolves with the new ones. */
  async bump(tables: readonly string[]): Promise<Record<string, number>> {
    const multi = this.redis.multi();
    for (const t of tables) multi.incr(generationKey(t));
    const replies = (await this.timed(multi.exec())) ?? [];
    const out: Record<string, number> = {};
    tables.forEach((t, i) => {
      const [err, value] = replies[i] ?? [new Error('no reply'), null];
      if (err) throw err;
      out[t] = Number(value);
    });
    return out;
  }

  close(): void {
    clearInterval(this.watchdog);
    this.redis.disconnect();
  }
}
