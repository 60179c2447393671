// Shared by the reply-cache tests: reading a key through an edge until the cache serves it.
import type { Redis } from 'ioredis';
import { waitFor } from '@dbproxy/testing';
import type { EdgeHarness } from './harness';

/** Reads `key` through `client` (connected to `edge`) until a read is a hit: the key is in the cache. */
export async function servedFromCache(edge: EdgeHarness, client: Redis, key: string): Promise<void> {
  await waitFor(
    async () => {
      const before = await edge.metric('dbproxy_redis_cache_hits_total');
      await client.get(key);
      return (await edge.metric('dbproxy_redis_cache_hits_total')) > before;
    },
    { timeoutMs: 5_000, description: `${key} served from the cache` },
  );
}
