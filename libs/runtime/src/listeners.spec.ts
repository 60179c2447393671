import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, MetricsRegistry } from '@dbproxy/observability';
import { ServiceListeners } from './listeners';

const logger = createLogger({ level: 'silent', service: 't', instance: 't', destination: new Writable({ write: (_c, _e, done) => done() }) });

function readAll(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let text = '';
    socket.on('data', (c) => (text += c.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('ServiceListeners', () => {
  it('admits up to the limit, refuses beyond it in the protocol, and stops accepting on drain', async () => {
    const metrics = new MetricsRegistry();
    const listeners = new ServiceListeners('test-edge', logger, metrics);
    const served: Socket[] = [];
    const bound = await listeners.listen({
      name: 'read_write',
      address: '127.0.0.1:0',
      maxConnections: () => 1,
      onConnection: (socket) => {
        served.push(socket);
        socket.write('HELLO\n');
      },
      reject: (socket, reason) => socket.end(`-ERR ${reason}\n`),
    });
    const port = Number(bound.address.split(':').pop());
    const first = connect({ port, host: '127.0.0.1' });
    await new Promise((r) => first.once('data', r));
    expect(listeners.activeConnections()).toBe(1);
    expect(await readAll(port)).toBe('-ERR max_connections\n');
    first.destroy();
    await new Promise((r) => served[0]?.once('close', r));
    expect(listeners.activeConnections()).toBe(0);
    const body = (await metrics.exposition()).body;
    expect(body).toContain('dbproxy_connections_rejected_total{service="test-edge",listener="read_write",reason="max_connections"} 1');
    listeners.stopAccepting();
    await expect(readAll(port)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('counts each listener\'s connections against its own limit: a full read-only listener leaves read-write open', async () => {
    const listeners = new ServiceListeners('test-edge', logger, new MetricsRegistry());
    const served: Socket[] = [];
    const spec = (name: string) => ({
      name,
      address: '127.0.0.1:0',
      maxConnections: () => 1,
      onConnection: (socket: Socket) => {
        served.push(socket);
        socket.write(`HELLO ${name}\n`);
      },
      reject: (socket: Socket, reason: string) => socket.end(`-ERR ${reason}\n`),
    });
    const portOf = (address: string) => Number(address.split(':').pop());
    const ro = portOf((await listeners.listen(spec('read_only'))).address);
    const rw = portOf((await listeners.listen(spec('read_write'))).address);
    const held = connect({ port: ro, host: '127.0.0.1' });
    await new Promise((r) => held.once('data', r));
    expect(await readAll(ro)).toBe('-ERR max_connections\n');
    const other = connect({ port: rw, host: '127.0.0.1' });
    expect(await new Promise((r) => other.once('data', (c) => r(c.toString())))).toBe('HELLO read_write\n');
    expect(listeners.activeConnections()).toBe(2);
    expect(await readAll(rw)).toBe('-ERR max_connections\n');
    held.destroy();
    other.destroy();
    await Promise.all(served.map((s) => new Promise((r) => (s.destroyed ? r(undefined) : s.once('close', r)))));
    expect(listeners.activeConnections()).toBe(0);
    listeners.stopAccepting();
  });
});
