#!/usr/bin/env node
// The floor of a byte relay in Node, for bench.cjs --floor: each accepted connection gets its own
// backend connection and every read goes on to the other socket as it arrived - net's `onread` into
// one reused buffer, one write(2) on the other socket's descriptor - with no parsing, timers,
// metrics or backpressure. What redis-edge connection mode costs above this is the proxy's own.
//
// Usage: node tools/bench/redis/relay-floor.cjs LISTEN_PORT BACKEND_PORT
'use strict';
const net = require('node:net');
const { writeSync } = require('node:fs');

const [listenPort, backendPort] = process.argv.slice(2).map(Number);
const SCRATCH = Buffer.allocUnsafe(64 * 1024);

/** write(2) on the socket's descriptor; what the kernel does not take goes through the stream (copied: the scratch is reused). */
function relayTo(socket) {
  return (n) => {
    let written = 0;
    try {
      if (socket.writableLength === 0) written = writeSync(socket._handle.fd, SCRATCH, 0, n);
    } catch {
      // EAGAIN: the stream takes it
    }
    if (written < n) socket.write(Buffer.from(SCRATCH.subarray(written, n)));
    return true;
  };
}

net
  .createServer({ noDelay: true, pauseOnConnect: true }, (accepted) => {
    const handle = accepted._handle;
    accepted._handle = null;
    const early = [];
    let toBackend = (n) => (early.push(Buffer.from(SCRATCH.subarray(0, n))), true);
    const client = new net.Socket({ handle, onread: { buffer: SCRATCH, callback: (n) => toBackend(n) } });
    const backend = net.connect({ host: '127.0.0.1', port: backendPort, noDelay: true, onread: { buffer: SCRATCH, callback: relayTo(client) } });
    backend.once('connect', () => {
      for (const chunk of early) backend.write(chunk);
      toBackend = relayTo(backend);
    });
    const close = () => (client.destroy(), backend.destroy(), accepted.destroy());
    for (const s of [client, backend]) s.on('error', close).on('close', close);
  })
  .listen(listenPort, '127.0.0.1');
