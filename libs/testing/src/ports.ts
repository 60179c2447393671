// Free TCP ports on 127.0.0.1, chosen below the kernel's ephemeral range so outgoing connections never take them.
import { createServer } from 'node:net';
import { NoFreePort } from './errors';

/** Ports handed out are drawn from [LOW, HIGH); Linux's ephemeral range starts at 32768. */
const LOW = 15_000;
const HIGH = 32_000;
/** Redis Cluster listens on port + 10000 too, so its ports come from a lower band. */
const CLUSTER_BUS_OFFSET = 10_000;
const ATTEMPTS = 200;

/** Ports this process handed out recently, so two servers in one test file never get the same one. */
const handedOut = new Set<number>();

/** True when nothing listens on 127.0.0.1:port (or on the wildcard address) right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

async function pickPort(low: number, high: number, alsoFree: (port: number) => number[]): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    const needed = [port, ...alsoFree(port)];
    if (needed.some((p) => handedOut.has(p))) continue;
    const free = await Promise.all(needed.map(isPortFree));
    if (free.every(Boolean)) {
      if (handedOut.size > 10_000) handedOut.clear();
      needed.forEach((p) => handedOut.add(p));
      return port;
    }
  }
  throw NoFreePort(ATTEMPTS);
}

/**
 * A TCP port that is free on 127.0.0.1 now. Another process may still take it before you bind:
 * the start functions retry with a new port when that happens.
 */
export function freePort(): Promise<number> {
  return pickPort(LOW, HIGH, () => []);
}

/** A port whose Redis Cluster bus port (port + 10000) is free too. */
export function freeClusterPort(): Promise<number> {
  return pickPort(LOW - 3_000, HIGH - CLUSTER_BUS_OFFSET, (port) => [port + CLUSTER_BUS_OFFSET]);
}
