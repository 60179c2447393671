// Unit tests of free port selection.
import { createServer, type Server } from 'node:net';
import { freeClusterPort, freePort, isPortFree } from './ports';

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1' }, () => resolve(server));
  });
}

describe('freePort', () => {
  it('returns distinct ports below the ephemeral range that can be bound', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(15_000);
      expect(port).toBeLessThan(32_768);
    }
    const server = await listen(ports[0]);
    server.close();
  });

  it('reports a port with a listener as taken', async () => {
    const port = await freePort();
    const server = await listen(port);
    try {
      expect(await isPortFree(port)).toBe(false);
    } finally {
      server.close();
    }
  });

  it('gives Redis Cluster ports whose bus port (+10000) is free and below the ephemeral range', async () => {
    const port = await freeClusterPort();
    expect(port + 10_000).toBeLessThan(32_768);
    expect(await isPortFree(port + 10_000)).toBe(true);
  });
});
