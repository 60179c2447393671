// The PROXY protocol codec: v2 encode/decode round trips, fed whole, split at every byte and byte by
// byte; v1 lines; and the refusals (missing, malformed, oversize).
import { encodeProxyV2, encodeProxyV2Local } from './encode';
import { ProxyHeaderDecoder, looksLikeProxyHeader, type ProxyDecodeStep } from './decode';

const client = { source: { address: '127.0.0.5', port: 40001 }, destination: { address: '10.1.2.3', port: 3306 } };

function feedAll(chunks: Buffer[], max = 1024, v1 = true): ProxyDecodeStep {
  const d = new ProxyHeaderDecoder(max, v1);
  let step: ProxyDecodeStep = { kind: 'more' };
  for (const c of chunks) {
    step = d.push(c);
    if (step.kind !== 'more') return step;
  }
  return step;
}

function splits(buf: Buffer): Buffer[][] {
  const ways: Buffer[][] = [[buf], [...buf].map((b) => Buffer.from([b]))];
  for (let i = 1; i < buf.length; i++) ways.push([buf.subarray(0, i), buf.subarray(i)]);
  return ways;
}

describe('PROXY protocol v2', () => {
  it('encodes an IPv4 TCP header byte for byte as the spec lays it out', () => {
    expect(encodeProxyV2(client).toString('hex')).toBe(
      '0d0a0d0a000d0a515549540a' + '21' + '11' + '000c' + '7f000005' + '0a010203' + '9c41' + '0cea',
    );
  });

  it('decodes what it encodes, whole, split at every byte and byte by byte, keeping the bytes after it', () => {
    const wire = Buffer.concat([encodeProxyV2(client), Buffer.from('hello')]);
    for (const chunks of splits(wire)) {
      const step = feedAll(chunks);
      expect(step.kind).toBe('header');
      if (step.kind !== 'header') continue;
      expect(step.header).toEqual({ version: 2, command: 'proxy', addresses: client });
      // byte-by-byte feeding ends on the header's last byte: the rest comes in later chunks
      if (chunks.length === 1) expect(step.rest.toString()).toBe('hello');
    }
  });

  it('round-trips IPv6 and sends mixed families as IPv6 (an IPv4 side as ::ffff:a.b.c.d)', () => {
    const v6 = { source: { address: '2001:db8::7', port: 1 }, destination: { address: 'fe80::1:2', port: 65535 } };
    const step = feedAll([encodeProxyV2(v6)]);
    expect(step).toMatchObject({ kind: 'header', header: { addresses: v6 } });
    const mixed = feedAll([encodeProxyV2({ source: { address: '::ffff:127.0.0.5', port: 9 }, destination: { address: '::1', port: 6379 } })]);
    expect(mixed).toMatchObject({ kind: 'header', header: { addresses: { source: { address: '127.0.0.5', port: 9 }, destination: { address: '::1', port: 6379 } } } });
  });

  it('a LOCAL header carries no addresses', () => {
    expect(encodeProxyV2Local().length).toBe(16);
    expect(feedAll([encodeProxyV2Local()])).toMatchObject({ kind: 'header', header: { command: 'local', addresses: null } });
  });

  it('accepts TLVs that fit and refuses ones that overrun', () => {
    const base = encodeProxyV2(client);
    const withTlv = Buffer.concat([base, Buffer.from([0x04, 0x00, 0x02, 0xaa, 0xbb])]);
    withTlv.writeUInt16BE(12 + 5, 14);
    expect(feedAll([withTlv]).kind).toBe('header');
    const overrun = Buffer.concat([base, Buffer.from([0x04, 0x00, 0x09, 0xaa])]);
    overrun.writeUInt16BE(12 + 4, 14);
    expect(feedAll([overrun])).toMatchObject({ kind: 'refused', reason: 'malformed', detail: 'TLVs overrun the header' });
  });

  it('refuses a wrong version, an unknown command, a short address block, a DGRAM header and an oversize header', () => {
    const mutate = (at: number, value: number) => {
      const b = Buffer.from(encodeProxyV2(client));
      b[at] = value;
      return b;
    };
    expect(feedAll([mutate(12, 0x11)])).toMatchObject({ kind: 'refused', reason: 'malformed' });
    expect(feedAll([mutate(12, 0x2f)])).toMatchObject({ kind: 'refused', reason: 'malformed' });
    expect(feedAll([mutate(13, 0x12)])).toMatchObject({ kind: 'refused', reason: 'malformed' });
    expect(feedAll([mutate(15, 4)])).toMatchObject({ kind: 'refused', reason: 'malformed', detail: 'INET address block too short' });
    const big = Buffer.from(encodeProxyV2(client));
    big.writeUInt16BE(2000, 14);
    expect(feedAll([big.subarray(0, 16)], 1024)).toMatchObject({ kind: 'refused', reason: 'malformed', detail: expect.stringContaining('1024-byte limit') });
  });

  it('calls a connection that starts with anything else missing, as soon as one byte differs', () => {
    expect(feedAll([Buffer.from([0x0d, 0x0a, 0x0d, 0x0b])])).toMatchObject({ kind: 'refused', reason: 'missing' });
    expect(feedAll([Buffer.from('\x00\x00\x00\x08\x04\xd2\x16\x2f')])).toMatchObject({ kind: 'refused', reason: 'missing' });
    expect(feedAll([Buffer.from([0x0d, 0x0a, 0x0d])]).kind).toBe('more');
    expect(looksLikeProxyHeader(Buffer.from('*1\r\n'))).toBe(false);
    expect(looksLikeProxyHeader(encodeProxyV2(client).subarray(0, 3))).toBe(true);
  });
});

describe('PROXY protocol v1', () => {
  const line = Buffer.from('PROXY TCP4 127.0.0.5 10.1.2.3 40001 3306\r\nPING');

  it('decodes a TCP4 line fed in any split, and UNKNOWN without addresses', () => {
    for (const chunks of splits(line)) {
      expect(feedAll(chunks)).toMatchObject({ kind: 'header', header: { version: 1, addresses: client } });
    }
    expect(feedAll([Buffer.from('PROXY TCP6 ::1 ::2 1 2\r\n')])).toMatchObject({ header: { addresses: { source: { address: '::1' } } } });
    expect(feedAll([Buffer.from('PROXY UNKNOWN\r\n')])).toMatchObject({ kind: 'header', header: { addresses: null } });
  });

  it('refuses v1 when only v2 is accepted, bad lines, and a line over 107 bytes', () => {
    expect(feedAll([line], 1024, false)).toMatchObject({ kind: 'refused', reason: 'malformed' });
    expect(feedAll([Buffer.from('PROXY TCP4 300.0.0.1 1.1.1.1 1 2\r\n')])).toMatchObject({ kind: 'refused', reason: 'malformed' });
    expect(feedAll([Buffer.from('PROXY TCP4 1.1.1.1 1.1.1.1 1 99999\r\n')])).toMatchObject({ kind: 'refused', reason: 'malformed' });
    expect(feedAll([Buffer.from(`PROXY ${'x'.repeat(120)}`)])).toMatchObject({ kind: 'refused', reason: 'malformed' });
  });
});
