// Two sockets that live and die together: raw piping with backpressure, and one close for both.
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { descriptorOf, DirectSocket, type RawListener } from '@dbproxy/runtime';

const LINGER_MS = 2_000;

/** Pipes `from` into `to` untouched: Node's pipe() pauses the reader while the writer is full. */
export function pump(from: Socket, to: Socket): void {
  from.pipe(to, { end: true });
}

/**
 * The sink of a socket read without the stream layer (`onread`): each read written to `to` at
 * once, straight from the read's scratch to its descriptor when it is plain TCP (only bytes the
 * kernel does not take are copied, into the stream), and `from` paused while `to` buffers (what
 * pipe() does, without the stream machinery or a Buffer per read).
 */
export function relayTo(to: Socket, from: Socket): RawListener {
  let waiting = false;
  const resume = () => {
    waiting = false;
    from.resume();
  };
  // a plain TCP target is written with one write(2) on its descriptor while nothing waits in its stream
  const direct = new DirectSocket(to, to instanceof TLSSocket ? -1 : descriptorOf(to));
  return (buf, n) => {
    if (direct.writeCopying(buf, n) || waiting) return;
    waiting = true;
    from.pause();
    to.once('drain', resume);
  };
}

/**
 * Ties the sockets' lifetimes: when one closes, the other is ended (what was written still
 * flushes) and destroyed shortly after; an error destroys both. `onClosed` runs once.
 */
export function bindLifetimes(a: Socket, b: Socket, onClosed: (reason: string) => void): void {
  let closed = false;
  const close = (reason: string, other: Socket) => {
    if (!closed) {
      closed = true;
      onClosed(reason);
    }
    if (!other.destroyed) {
      other.end();
      setTimeout(() => other.destroy(), LINGER_MS).unref();
    }
  };
  a.once('close', () => close('client closed', b));
  b.once('close', () => close('backend closed', a));
  a.on('error', () => a.destroy());
  b.on('error', () => b.destroy());
}
