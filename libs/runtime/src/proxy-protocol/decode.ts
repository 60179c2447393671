// Decoding the PROXY protocol header a load balancer sends before the client's first byte: version 2
// (binary) and version 1 (text), fed in chunks, bounded in size. No sockets or timers here.
import { Buffer } from 'node:buffer';
import { isIPv4, isIPv6 } from 'node:net';
import type { ProxiedAddresses } from './encode';
import { V1_MAX_BYTES, V1_PREFIX, V2Command, V2Family, V2Transport, V2_ADDRESS_BYTES, V2_FIXED_BYTES, V2_SIGNATURE, V2_VERSION } from './wire';

export interface ProxyHeader {
  readonly version: 1 | 2;
  readonly command: 'local' | 'proxy';
  /** The client and the address it reached; null for LOCAL, UNSPEC/UNKNOWN and UNIX (the socket's own addresses stand). */
  readonly addresses: ProxiedAddresses | null;
}

export type ProxyDecodeStep =
  | { readonly kind: 'more' }
  | { readonly kind: 'header'; readonly header: ProxyHeader; readonly rest: Buffer }
  /** `missing`: the bytes are no PROXY header at all; `malformed`: a header, but broken or over the size bound. */
  | { readonly kind: 'refused'; readonly reason: 'missing' | 'malformed'; readonly detail: string };

const more: ProxyDecodeStep = { kind: 'more' };
const refuse = (reason: 'missing' | 'malformed', detail: string): ProxyDecodeStep => ({ kind: 'refused', reason, detail });

/** Whether `got` is a prefix of `expected` (or the other way round when `got` is longer). */
function startsLike(got: Buffer, expected: Buffer): boolean {
  const n = Math.min(got.length, expected.length);
  return got.subarray(0, n).equals(expected.subarray(0, n));
}

function ipv6Text(b: Buffer): string {
  if (b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

function v2Addresses(family: number, body: Buffer): ProxiedAddresses | null | string {
  if (family === V2Family.Inet) {
    if (body.length < V2_ADDRESS_BYTES.inet) return 'INET address block too short';
    const ip = (o: number) => `${body[o]}.${body[o + 1]}.${body[o + 2]}.${body[o + 3]}`;
    return { source: { address: ip(0), port: body.readUInt16BE(8) }, destination: { address: ip(4), port: body.readUInt16BE(10) } };
  }
  if (family === V2Family.Inet6) {
    if (body.length < V2_ADDRESS_BYTES.inet6) return 'INET6 address block too short';
    return { source: { address: ipv6Text(body.subarray(0, 16)), port: body.readUInt16BE(32) }, destination: { address: ipv6Text(body.subarray(16, 32)), port: body.readUInt16BE(34) } };
  }
  if (family === V2Family.Unix) return body.length < V2_ADDRESS_BYTES.unix ? 'UNIX address block too short' : null;
  return family === V2Family.Unspec ? null : `unknown address family 0x${family.toString(16)}`;
}

/** TLVs (type, 2-byte length, value) after the address block must fill the rest exactly. */
function tlvsFit(tlvs: Buffer): boolean {
  let at = 0;
  while (at < tlvs.length) {
    if (at + 3 > tlvs.length) return false;
    at += 3 + tlvs.readUInt16BE(at + 1);
  }
  return at === tlvs.length;
}

function decodeV2(buf: Buffer, maxBytes: number): ProxyDecodeStep {
  if (buf.length < V2_FIXED_BYTES) return more;
  const versionCommand = buf[12] as number;
  if ((versionCommand & 0xf0) !== V2_VERSION) return refuse('malformed', `version ${versionCommand >> 4} is not 2`);
  const command = versionCommand & 0x0f;
  if (command !== V2Command.Local && command !== V2Command.Proxy) return refuse('malformed', `unknown command ${command}`);
  const total = V2_FIXED_BYTES + buf.readUInt16BE(14);
  if (total > maxBytes) return refuse('malformed', `header of ${total} bytes is over the ${maxBytes}-byte limit`);
  if (buf.length < total) return more;
  const rest = buf.subarray(total);
  if (command === V2Command.Local) return { kind: 'header', header: { version: 2, command: 'local', addresses: null }, rest };
  const family = (buf[13] as number) & 0xf0;
  const transport = (buf[13] as number) & 0x0f;
  const body = buf.subarray(V2_FIXED_BYTES, total);
  const addresses = v2Addresses(family, body);
  if (typeof addresses === 'string') return refuse('malformed', addresses);
  if (addresses !== null && transport !== V2Transport.Stream) return refuse('malformed', 'a TCP connection must carry a STREAM header');
  const used = family === V2Family.Inet ? V2_ADDRESS_BYTES.inet : family === V2Family.Inet6 ? V2_ADDRESS_BYTES.inet6 : family === V2Family.Unix ? V2_ADDRESS_BYTES.unix : body.length;
  if (!tlvsFit(body.subarray(used))) return refuse('malformed', 'TLVs overrun the header');
  return { kind: 'header', header: { version: 2, command: 'proxy', addresses }, rest };
}

const port = (s: string | undefined) => (s !== undefined && /^\d{1,5}$/.test(s) && Number(s) <= 65535 ? Number(s) : -1);

function decodeV1(buf: Buffer): ProxyDecodeStep {
  const end = buf.indexOf('\r\n', 0, 'latin1');
  if (end < 0) return buf.length >= V1_MAX_BYTES ? refuse('malformed', `v1 header longer than ${V1_MAX_BYTES} bytes`) : more;
  if (end + 2 > V1_MAX_BYTES) return refuse('malformed', `v1 header longer than ${V1_MAX_BYTES} bytes`);
  const rest = buf.subarray(end + 2);
  const words = buf.toString('latin1', 0, end).split(' ');
  if (words[1] === 'UNKNOWN') return { kind: 'header', header: { version: 1, command: 'proxy', addresses: null }, rest };
  const [, proto, src, dst, sport, dport] = words;
  const valid = proto === 'TCP4' ? isIPv4 : proto === 'TCP6' ? isIPv6 : null;
  if (words.length !== 6 || valid === null || !valid(src ?? '') || !valid(dst ?? '') || port(sport) < 0 || port(dport) < 0) return refuse('malformed', 'bad v1 header line');
  return { kind: 'header', header: { version: 1, command: 'proxy', addresses: { source: { address: src as string, port: port(sport) }, destination: { address: dst as string, port: port(dport) } } }, rest };
}

/** One connection's header: push the chunks as they come until the step is not `more`. */
export class ProxyHeaderDecoder {
  private held: Buffer = Buffer.alloc(0);

  /** `maxBytes` bounds a version 2 header (version 1 lines are at most 107 bytes); `acceptV1`: whether the text form is allowed. */
  constructor(
    private readonly maxBytes: number,
    private readonly acceptV1: boolean,
  ) {}

  push(chunk: Buffer): ProxyDecodeStep {
    const buf = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    const step = this.decode(buf);
    this.held = step.kind === 'more' ? Buffer.from(buf) : Buffer.alloc(0);
    return step;
  }

  private decode(buf: Buffer): ProxyDecodeStep {
    if (startsLike(buf, V2_SIGNATURE)) return buf.length < V2_SIGNATURE.length ? more : decodeV2(buf, this.maxBytes);
    if (startsLike(buf, V1_PREFIX)) {
      if (!this.acceptV1) return buf.length < V1_PREFIX.length ? more : refuse('malformed', 'PROXY protocol version 1 is not accepted');
      return buf.length < V1_PREFIX.length ? more : decodeV1(buf);
    }
    return refuse('missing', 'the connection did not start with a PROXY protocol header');
  }
}

/** Whether the first bytes a connection sent are (the start of) a PROXY header of either version. */
export function looksLikeProxyHeader(first: Buffer): boolean {
  return first.length > 0 && (startsLike(first, V2_SIGNATURE) || startsLike(first, V1_PREFIX));
}
