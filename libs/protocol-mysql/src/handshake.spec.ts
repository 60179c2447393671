import fc from 'fast-check';
import { Capability, DEFAULT_SERVER_CAPABILITIES, MariaDbCapability } from './capabilities';
import { Collation } from './charsets';
import { PacketWriter } from './cursor';
import { decodeInitialHandshake, encodeInitialHandshake } from './handshake';
import { decodeClientHandshake, encodeHandshakeResponse, encodeSslRequest, type HandshakeResponse } from './handshake-response';
import { decodeEveryWay, returnsOrThrowsProtocolError, thrownCode } from './testing';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('initial handshake v10', () => {
  it('decodes the MySQL 5.5 example from the protocol documentation (no plugin auth)', () => {
    const hs = decodeInitialHandshake(
      hex('0a 352e352e322d6d3200 52000000 223d4e5029753956 00 ffff 08 0200 0000 00 00000000000000000000 296440525c55787a7c21294b00'),
    );
    expect(hs.serverVersion).toBe('5.5.2-m2');
    expect(hs.connectionId).toBe(0x52);
    expect(hs.capabilities).toBe(0xffff);
    expect(hs.characterSet).toBe(8);
    expect(hs.statusFlags).toBe(2);
    expect(hs.scramble.toString('hex')).toBe('223d4e5029753956296440525c55787a7c21294b');
    expect(hs.authPlugin).toBe('');
    expect(hs.mariaDbCapabilities).toBe(0);
  });

  it('decodes a MariaDB 10.11 greeting captured from the server, extended capabilities included', () => {
    const hs = decodeInitialHandshake(
      hex(
        '0a352e352e352d31302e31312e31392d4d6172696144422d302b64656231327531000b0000005e655e2c5a63634600fef72d0200ff81150000000000001d000000753d6d30464d324f772b6b5e006d7973716c5f6e61746976655f70617373776f726400',
      ),
    );
    expect(hs.serverVersion).toBe('5.5.5-10.11.19-MariaDB-0+deb12u1');
    expect(hs.connectionId).toBe(11);
    expect(hs.scramble).toHaveLength(20);
    expect(hs.authPlugin).toBe('mysql_native_password');
    expect(hs.capabilities & Capability.LongPassword).toBe(0);
    expect(hs.capabilities & Capability.PluginAuth).toBe(Capability.PluginAuth);
    expect(hs.mariaDbCapabilities).toBe(MariaDbCapability.Progress | MariaDbCapability.StmtBulkOperations | MariaDbCapability.ExtendedMetadata | MariaDbCapability.CacheMetadata);
  });

  it('round-trips through encode and decode fed every way', () => {
    const w = new PacketWriter();
    const scramble = Buffer.from('abcdefghijklmnopqrst');
    encodeInitialHandshake(w, {
      serverVersion: '8.0.36-dbproxy',
      connectionId: 0xdeadbeef,
      scramble,
      capabilities: DEFAULT_SERVER_CAPABILITIES | Capability.RememberOptions,
      characterSet: Collation.utf8mb4_0900_ai_ci,
      statusFlags: 2,
      authPlugin: 'caching_sha2_password',
    });
    const [hs] = decodeEveryWay(w.flush(), (p) => [p.sequenceId, decodeInitialHandshake(p.payload)]);
    expect(hs).toEqual([
      0,
      {
        serverVersion: '8.0.36-dbproxy',
        connectionId: 0xdeadbeef,
        scramble,
        capabilities: (DEFAULT_SERVER_CAPABILITIES | Capability.RememberOptions) >>> 0,
        mariaDbCapabilities: 0,
        characterSet: Collation.utf8mb4_0900_ai_ci,
        statusFlags: 2,
        authPlugin: 'caching_sha2_password',
      },
    ]);
  });

  it('carries MariaDB extended capabilities when CLIENT_MYSQL is unset', () => {
    const w = new PacketWriter();
    const caps = DEFAULT_SERVER_CAPABILITIES & ~Capability.LongPassword;
    encodeInitialHandshake(w, { serverVersion: '5.5.5-11.4.2-MariaDB', connectionId: 1, scramble: Buffer.alloc(20, 1), capabilities: caps, mariaDbCapabilities: MariaDbCapability.Progress, authPlugin: 'mysql_native_password' });
    expect(decodeInitialHandshake(w.flush().subarray(4)).mariaDbCapabilities).toBe(MariaDbCapability.Progress);
  });

  it('refuses other protocol versions and truncated greetings with typed errors', () => {
    expect(thrownCode(() => decodeInitialHandshake(hex('09 3500')))).toBe('DBP_ERR_MYSQL_UNSUPPORTED');
    expect(thrownCode(() => decodeInitialHandshake(hex('0a 352e35')))).toBe('DBP_ERR_MYSQL_PACKET_TRUNCATED');
  });
});

describe('HandshakeResponse41 and SSLRequest', () => {
  const caps =
    Capability.LongPassword | Capability.Protocol41 | Capability.SecureConnection | Capability.PluginAuth | Capability.PluginAuthLenencClientData | Capability.ConnectWithDb | Capability.ConnectAttrs | Capability.Transactions;
  const attrs = new Map([
    ['_client_name', 'libmariadb'],
    ['_pid', '4242'],
    ['program_name', 'x'.repeat(300)],
  ]);

  it('round-trips with database, plugin and connect attributes; SSLRequest first in the same chunk', () => {
    const w = new PacketWriter();
    encodeSslRequest(w, 1, { capabilities: caps, characterSet: Collation.utf8mb4_general_ci });
    encodeHandshakeResponse(w, 2, { capabilities: caps | Capability.Ssl, characterSet: Collation.utf8mb4_general_ci, username: 'app', authResponse: Buffer.alloc(32, 9), database: 'shop', authPlugin: 'caching_sha2_password', connectAttributes: attrs });
    const [ssl, res] = decodeEveryWay(w.flush(), (p) => decodeClientHandshake(p.payload));
    expect(ssl).toEqual({ kind: 'ssl-request', capabilities: (caps | Capability.Ssl) >>> 0, maxPacketSize: 0x01000000, characterSet: Collation.utf8mb4_general_ci, mariaDbCapabilities: 0 });
    expect(res).toEqual<HandshakeResponse>({
      kind: 'handshake-response',
      capabilities: (caps | Capability.Ssl) >>> 0,
      maxPacketSize: 0x01000000,
      characterSet: Collation.utf8mb4_general_ci,
      mariaDbCapabilities: 0,
      username: 'app',
      authResponse: Buffer.alloc(32, 9),
      database: 'shop',
      authPlugin: 'caching_sha2_password',
      connectAttributes: attrs,
      zstdCompressionLevel: null,
    });
  });

  it('decodes the one-byte auth length form and leaves optional parts null when flags are off', () => {
    const basic = Capability.Protocol41 | Capability.SecureConnection;
    const w = new PacketWriter();
    encodeHandshakeResponse(w, 1, { capabilities: basic, characterSet: 8, username: 'root', authResponse: Buffer.alloc(20, 1), database: 'ignored' });
    const res = decodeClientHandshake(w.flush().subarray(4));
    expect(res).toMatchObject({ kind: 'handshake-response', username: 'root', database: null, authPlugin: null, connectAttributes: null });
    if (res.kind === 'handshake-response') expect(res.authResponse).toEqual(Buffer.alloc(20, 1));
  });

  it('reads MariaDB extended client capabilities when CLIENT_MYSQL is unset', () => {
    const w = new PacketWriter();
    encodeHandshakeResponse(w, 1, { capabilities: caps & ~Capability.LongPassword, mariaDbCapabilities: MariaDbCapability.CacheMetadata, characterSet: 45, username: 'u', authResponse: Buffer.alloc(0) });
    expect(decodeClientHandshake(w.flush().subarray(4)).mariaDbCapabilities).toBe(MariaDbCapability.CacheMetadata);
  });

  it('refuses HandshakeResponse320 (no CLIENT_PROTOCOL_41)', () => {
    expect(thrownCode(() => decodeClientHandshake(hex('0500 000000 726f6f7400')))).toBe('DBP_ERR_MYSQL_UNSUPPORTED');
  });

  it('decoders return or throw typed protocol errors on random and mutated input (property)', () => {
    const w = new PacketWriter();
    encodeHandshakeResponse(w, 1, { capabilities: caps, characterSet: 45, username: 'app', authResponse: Buffer.alloc(20, 3), database: 'db', authPlugin: 'mysql_native_password', connectAttributes: attrs });
    const valid = w.flush().subarray(4);
    const w2 = new PacketWriter();
    encodeInitialHandshake(w2, { serverVersion: 'v', connectionId: 1, scramble: Buffer.alloc(20, 2), capabilities: DEFAULT_SERVER_CAPABILITIES, authPlugin: 'caching_sha2_password' });
    const greeting = w2.flush().subarray(4);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.nat(400), fc.nat(400), fc.integer({ min: 0, max: 255 }), (random, cut, at, byte) => {
        for (const base of [valid, greeting]) {
          const bytes = Buffer.from(base.subarray(0, cut % (base.length + 1)));
          if (at < bytes.length) bytes[at] = byte;
          returnsOrThrowsProtocolError(() => decodeClientHandshake(bytes));
          returnsOrThrowsProtocolError(() => decodeInitialHandshake(bytes));
        }
        returnsOrThrowsProtocolError(() => decodeClientHandshake(Buffer.from(random)));
        returnsOrThrowsProtocolError(() => decodeInitialHandshake(Buffer.from(random)));
      }),
    );
  });
});
