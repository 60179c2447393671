// The Redis/Valkey side of the MySQL result cache: one connection per edge process to the
// [[redis_backends]] entry [mysql.cache] redis_backend names. A lookup reads the tables'
// generations and the entry they select in one script call (so a lookup never uses a generation
// older than the last bump the server applied); a bump INCRs generations in one MULTI.
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

const LOOKUP = `
local gens = {}
for i, k in ipairs(KEYS) do gens[i] = redis.call('GET', k) or '0' end
local joined = table.concat(gens, '.')
return {joined, redis.call('GET', ARGV[1] .. ':' .. joined) or false}
`;

type LookupReply = [Buffer, Buffer | null];
type CacheRedis = Redis & { mcacheLookupBuffer(numKeys: number, ...args: string[]): Promise<LookupReply> };

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

export class ResultStore {
  private readonly redis: CacheRedis;
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
    }) as CacheRedis;
    this.redis.defineCommand('mcacheLookup', { lua: LOOKUP });
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
    const [generations, value] = await this.timed(this.redis.mcacheLookupBuffer(tables.length, ...tables.map(generationKey), `${PREFIX}:entry:${base}`));
    return { generations: generations.toString(), value };
  }

  async store(base: string, generations: string, value: Buffer, ttlSeconds: number): Promise<void> {
    await this.timed(this.redis.set(`${PREFIX}:entry:${base}:${generations}`, value, 'EX', ttlSeconds));
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
