// The Redis/Valkey side of the MySQL result cache: one connection per edge process to the
// [[redis_backends]] entry [mysql.cache] redis_backend names. A lookup reads the tables'
// generations and the entry they select in one script call (so a lookup never uses a generation
// older than the last bump the server applied); a bump INCRs generations in one MULTI.
import { splitAddress } from '@dbproxy/observability';
import Redis from 'ioredis';

const PREFIX = 'dbproxy:mysql:cache';
/** Redis commands answer within this or count as a lost server (the cache is then bypassed). */
const COMMAND_TIMEOUT_MS = 1000;

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
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: (times) => Math.min(100 * times, 2000),
    }) as CacheRedis;
    this.redis.defineCommand('mcacheLookup', { lua: LOOKUP });
    this.redis.on('ready', onStatus);
    this.redis.on('close', onStatus);
    this.redis.on('error', () => onStatus());
    this.redis.connect().catch(() => onStatus());
  }

  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  async lookup(tables: readonly string[], base: string): Promise<Lookup> {
    const [generations, value] = await this.redis.mcacheLookupBuffer(tables.length, ...tables.map(generationKey), `${PREFIX}:entry:${base}`);
    return { generations: generations.toString(), value };
  }

  async store(base: string, generations: string, value: Buffer, ttlSeconds: number): Promise<void> {
    await this.redis.set(`${PREFIX}:entry:${base}:${generations}`, value, 'EX', ttlSeconds);
  }

  /** INCRs every table's generation; resolves with the new ones. */
  async bump(tables: readonly string[]): Promise<Record<string, number>> {
    const multi = this.redis.multi();
    for (const t of tables) multi.incr(generationKey(t));
    const replies = (await multi.exec()) ?? [];
    const out: Record<string, number> = {};
    tables.forEach((t, i) => {
      const [err, value] = replies[i] ?? [new Error('no reply'), null];
      if (err) throw err;
      out[t] = Number(value);
    });
    return out;
  }

  close(): void {
    this.redis.disconnect();
  }
}
