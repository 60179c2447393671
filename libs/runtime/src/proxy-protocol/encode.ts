// Encoding PROXY protocol v2 headers: what a connection opened for a client sends as its first bytes.
import { Buffer } from 'node:buffer';
import { isIPv4, isIPv6 } from 'node:net';
import { V2Command, V2Family, V2Transport, V2_SIGNATURE, V2_VERSION } from './wire';

export interface ProxyEndpoint {
  readonly address: string;
  readonly port: number;
}

/** Whom a connection is on behalf of: the client (source) and the address it connected to (destination). */
export interface ProxiedAddresses {
  readonly source: ProxyEndpoint;
  readonly destination: ProxyEndpoint;
}

function fixedPart(command: number, family: number, length: number): Buffer {
  const out = Buffer.alloc(16 + length);
  V2_SIGNATURE.copy(out, 0);
  out[12] = V2_VERSION | command;
  out[13] = family;
  out.writeUInt16BE(length, 14);
  return out;
}

/** `::ffff:a.b.c.d` as `a.b.c.d`, so an IPv4 client on a dual-stack listener is sent as IPv4. */
export function unmapIPv4(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? (m[1] as string) : address;
}

function ipv4Bytes(address: string): number[] {
  return address.split('.').map(Number);
}

function ipv6Bytes(address: string): Buffer {
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  let text = address;
  if (v4) {
    const [a, b, c, d] = ipv4Bytes(v4[1] as string) as [number, number, number, number];
    text = `${address.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

/** A PROXY header (TCP over IPv4 or IPv6) naming `addresses`; mixed families are both sent as IPv6. */
export function encodeProxyV2(addresses: ProxiedAddresses): Buffer {
  const src = unmapIPv4(addresses.source.address);
  const dst = unmapIPv4(addresses.destination.address);
  if (!(isIPv4(src) || isIPv6(src)) || !(isIPv4(dst) || isIPv6(dst))) throw new TypeError(`not IP addresses: ${src}, ${dst}`);
  if (isIPv4(src) && isIPv4(dst)) {
    const out = fixedPart(V2Command.Proxy, V2Family.Inet | V2Transport.Stream, 12);
    Buffer.from([...ipv4Bytes(src), ...ipv4Bytes(dst)]).copy(out, 16);
    out.writeUInt16BE(addresses.source.port, 24);
    out.writeUInt16BE(addresses.destination.port, 26);
    return out;
  }
  const as6 = (a: string) => (isIPv4(a) ? `::ffff:${a}` : a);
  const out = fixedPart(V2Command.Proxy, V2Family.Inet6 | V2Transport.Stream, 36);
  ipv6Bytes(as6(src)).copy(out, 16);
  ipv6Bytes(as6(dst)).copy(out, 32);
  out.writeUInt16BE(addresses.source.port, 48);
  out.writeUInt16BE(addresses.destination.port, 50);
  return out;
}

/** A LOCAL header: the connection is the sender's own, the receiver keeps the socket's addresses. */
export function encodeProxyV2Local(): Buffer {
  return fixedPart(V2Command.Local, V2Family.Unspec | V2Transport.Unspec, 0);
}
