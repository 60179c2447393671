// Authentication passthrough ([mysql] auth = "passthrough"): the shard's primary checks the
// client's password, the edge never holds one. After the client's HandshakeResponse the edge opens a
// connection of the session's own to the primary, names the client's user (and database) to it in
// its own HandshakeResponse with an auth plugin no server has, so the server answers with an
// AuthSwitchRequest for the account's real plugin and its own scramble. That request, and every
// auth packet after it (caching_sha2_password's fast-auth result, full-auth request, RSA public key
// exchange, the client's replies), is relayed byte for byte in both directions, renumbered; the
// server's OK or ERR ends it. The connection is then the session's for its life: the edge cannot
// log a pooled connection in as this user again (it has no password), and could not hand a
// connection logged in as one user to another client.
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import {
  CACHING_SHA2_PLUGIN,
  CachingSha2Message,
  Capability,
  PacketFramer,
  PacketHeader,
  PacketWriter,
  decodeErr,
  decodeInitialHandshake,
  encodeAuthData,
  encodeHandshakeResponse,
  encodeSslRequest,
  encryptPasswordWithPublicKey,
  scrambleFromPluginData,
  hasFlag,
  intersectFlags,
  type HandshakeResponse,
  type InitialHandshake,
  type MysqlPacket,
} from '@dbproxy/protocol-mysql';
import { ByteReader } from '@dbproxy/runtime';
import { BackendConnection, type BackendConnectionOptions } from '../backend/backend-connection';
import { abandonHandshake, HandshakePump, runSetupQuery, tcpConnect, upgradeTls, type BackendEndpoint } from '../backend/backend-handshake';
import { BACKEND_COLLATION, COLLATIONS_QUERY, type CollationCatalog } from '../backend/collations';
import { MysqlEdgeErrors, type MysqlError } from '../errors';
import { ClientPacketQueue } from './client-packets';

/**
 * The plugin the edge names in its HandshakeResponse: unknown to every server, so the server always
 * switches to the account's own plugin and sends the scramble the client must answer.
 */
export const PASSTHROUGH_PROBE_PLUGIN = 'dbproxy_passthrough';

/** Where a passthrough session logs in: the primary of the session's shard. */
export interface PassthroughTarget {
  readonly shard: string;
  readonly endpoint: BackendEndpoint;
}

export interface PassthroughSettings {
  readonly target: PassthroughTarget;
  /** Capabilities the backend HandshakeResponse asks for (the pool's for this client's profile). */
  readonly backendCapabilities: number;
  /** MariaDB extended capabilities the client's profile needs from the backend. */
  readonly mariaDbCapabilities: number;
  readonly connectTimeoutMs: number;
  /** The client's link to the edge is TLS (its caching_sha2 full auth then sends the password in cleartext). */
  readonly clientSecure: boolean;
  readonly collations: CollationCatalog;
  readonly connection: BackendConnectionOptions;
}

/** How a relayed login ended. */
export type PassthroughOutcome =
  | { readonly kind: 'accepted'; readonly conn: BackendConnection; readonly plugin: string }
  | { readonly kind: 'refused'; readonly err: MysqlError; readonly seq: number; readonly plugin: string };

export interface PassthroughHost {
  /** Relayed auth packets (and the server's OK) to the client. */
  send(bytes: Buffer): void;
}

export class PassthroughLogin {
  private readonly client = new ClientPacketQueue();
  private readonly abort = new AbortController();
  private readonly w = new PacketWriter(256);
  private socket: Socket | null = null;
  /** The account's plugin, as the server's AuthSwitchRequest named it. */
  private plugin = 'unknown';
  /** The scramble of the server's AuthSwitchRequest (the RSA bridge XORs the password with it). */
  private scramble: Buffer = Buffer.alloc(0);
  /** Sequence id of the edge's next packet to the client (an ERR should the relay fail). */
  nextClientSeq: number;

  constructor(
    private readonly host: PassthroughHost,
    private readonly hello: HandshakeResponse,
    /** Sequence id of the client's HandshakeResponse (2 after an SSLRequest). */
    private readonly helloSeq: number,
    private readonly settings: PassthroughSettings,
  ) {
    this.nextClientSeq = (helloSeq + 1) & 0xff;
  }

  /** Runs the relayed login; rejects with an edge error (backend unreachable, protocol) that the session reports. */
  run(): Promise<PassthroughOutcome> {
    return this.relay();
  }

  /** A client packet of the auth exchange (its reply to the relayed AuthSwitchRequest or AuthMoreData). */
  clientPacket(packet: MysqlPacket): void {
    this.client.push(packet);
  }

  /** The session ended first (client gone, login timeout): the backend connection goes too. */
  cancel(reason: string): void {
    this.client.fail(new Error(reason));
    this.abort.abort(new Error(reason));
    this.socket?.destroy();
  }

  private async relay(): Promise<PassthroughOutcome> {
    const { endpoint } = this.settings.target;
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.settings.connectTimeoutMs)]);
    const reader = endpoint.tls ? null : new ByteReader();
    let socket = await tcpConnect(endpoint, signal, reader);
    this.socket = socket;
    let framer = new PacketFramer();
    let pump = new HandshakePump(socket, framer, reader);
    const onAbort = () => pump.fail(signal.reason instanceof Error ? signal.reason : new Error('login aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const greeting = await pump.next();
      if (greeting.payload[0] === PacketHeader.Err) return this.refused(greeting, this.helloSeq + 1 - greeting.sequenceId);
      const handshake = decodeInitialHandshake(greeting.payload);
      const fields = this.handshakeResponse(handshake);
      let seq = 1;
      if (endpoint.tls) {
        seq = encodeSslRequest(this.w, seq, fields);
        socket.write(this.w.flush());
        pump.detach();
        socket = await upgradeTls(socket, endpoint, endpoint.tls);
        this.socket = socket;
        framer = new PacketFramer();
        pump = new HandshakePump(socket, framer, null);
      }
      // client sequence id = backend sequence id + shift, for every relayed packet
      const shift = this.helloSeq - seq;
      encodeHandshakeResponse(this.w, seq, fields);
      socket.write(this.w.flush());
      const ok = await this.exchange(pump, socket, shift);
      if (ok.kind === 'refused') return ok;
      if (!this.settings.collations.loaded) {
        await runSetupQuery(pump, socket, this.w, fields.capabilities, { sql: COLLATIONS_QUERY, rows: (rows) => this.settings.collations.load(rows) }, endpoint.backend);
      }
      pump.detach();
      const conn = new BackendConnection({ socket, framer, handshake, capabilities: fields.capabilities, mariaDbCapabilities: fields.mariaDbCapabilities, reader: endpoint.tls ? null : reader }, this.settings.connection);
      if (this.hello.database) conn.schema = this.hello.database;
      this.host.send(ok.bytes);
      return { kind: 'accepted', conn, plugin: this.plugin };
    } catch (err) {
      throw abandonHandshake(pump, socket, endpoint.backend, err);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** The edge's HandshakeResponse: the client's user and database, the capabilities pooled connections of its profile have. */
  private handshakeResponse(handshake: InitialHandshake) {
    const hello = this.hello;
    let wanted = this.settings.backendCapabilities | Capability.PluginAuth | Capability.PluginAuthLenencClientData;
    if (hello.database) wanted |= Capability.ConnectWithDb;
    if (hello.connectAttributes) wanted |= Capability.ConnectAttrs;
    if (this.settings.target.endpoint.tls) wanted |= Capability.Ssl;
    const mariaDb = intersectFlags(this.settings.mariaDbCapabilities, handshake.mariaDbCapabilities);
    if (mariaDb !== this.settings.mariaDbCapabilities) throw MysqlEdgeErrors.backendConnect(this.settings.target.endpoint.backend, 'the server lacks MARIADB_CLIENT_EXTENDED_METADATA, which this client negotiated');
    if (mariaDb !== 0) wanted &= ~Capability.LongPassword;
    const capabilities = (intersectFlags(wanted, handshake.capabilities) | Capability.Protocol41) >>> 0;
    if (!hasFlag(capabilities, Capability.PluginAuth)) throw MysqlEdgeErrors.backendProtocol(this.settings.target.endpoint.backend, 'the server does not offer CLIENT_PLUGIN_AUTH');
    return {
      capabilities,
      characterSet: BACKEND_COLLATION,
      mariaDbCapabilities: hasFlag(capabilities, Capability.LongPassword) ? 0 : mariaDb,
      username: hello.username,
      authResponse: Buffer.alloc(0),
      database: hello.database,
      authPlugin: PASSTHROUGH_PROBE_PLUGIN,
      connectAttributes: hello.connectAttributes,
    };
  }

  /** Relays the auth exchange until the server's OK (its bytes, renumbered, returned) or ERR. */
  private async exchange(pump: HandshakePump, socket: Socket, shifted: number): Promise<{ kind: 'ok'; bytes: Buffer } | Extract<PassthroughOutcome, { kind: 'refused' }>> {
    let shift = shifted;
    for (;;) {
      const packet = await pump.next();
      const header = packet.payload[0];
      if (header === PacketHeader.Err) return this.refused(packet, shift);
      if (header === PacketHeader.Ok) return { kind: 'ok', bytes: this.toClient(packet, shift) };
      if (header !== PacketHeader.Eof && header !== PacketHeader.AuthMoreData) throw MysqlEdgeErrors.backendProtocol(this.settings.target.endpoint.backend, `authentication reply starts with 0x${(header ?? 0).toString(16)}`);
      if (header === PacketHeader.Eof) this.switchedTo(packet.payload);
      // caching_sha2_password's fast-auth success (0x01 0x03) is followed by the OK: no client reply
      const awaitsReply = !(header === PacketHeader.AuthMoreData && packet.payload.length === 2 && packet.payload[1] === FAST_AUTH_SUCCESS);
      this.host.send(this.toClient(packet, shift));
      if (!awaitsReply) continue;
      const reply = await this.client.next();
      this.nextClientSeq = (reply.sequenceId + 1) & 0xff;
      const backendSeq = (reply.sequenceId - shift) & 0xff;
      if (this.bridgesFullAuth(packet)) shift = await this.rsaToBackend(pump, socket, reply, backendSeq);
      else socket.write(this.renumbered(reply, backendSeq));
    }
  }

  private switchedTo(payload: Buffer): void {
    const nul = payload.indexOf(0, 1);
    this.plugin = payload.toString('latin1', 1, nul < 0 ? payload.length : nul);
    this.scramble = nul < 0 ? Buffer.alloc(0) : Buffer.from(scrambleFromPluginData(payload.subarray(nul + 1)));
  }

  /**
   * caching_sha2_password full auth with TLS to the client and none to the server: the client sends
   * its password in cleartext (it may: its link is secure), which the server refuses on a link
   * without TLS. The edge then does what a client does there: asks the server for its RSA key and
   * sends the password encrypted with it (never stored, never logged).
   */
  private bridgesFullAuth(packet: MysqlPacket): boolean {
    const p = packet.payload;
    return this.settings.clientSecure && this.settings.target.endpoint.tls === null && this.plugin === CACHING_SHA2_PLUGIN && p.length === 2 && p[0] === PacketHeader.AuthMoreData && p[1] === CachingSha2Message.PerformFullAuthentication;
  }

  /** Sends the client's cleartext password RSA-encrypted (see bridgesFullAuth); returns the new sequence shift. */
  private async rsaToBackend(pump: HandshakePump, socket: Socket, reply: MysqlPacket, backendSeq: number): Promise<number> {
    const backend = this.settings.target.endpoint.backend;
    const cleartext = reply.payload[reply.payload.length - 1] === 0 ? reply.payload.subarray(0, reply.payload.length - 1) : reply.payload;
    encodeAuthData(this.w, backendSeq, Buffer.of(CachingSha2Message.RequestPublicKey));
    socket.write(this.w.flush());
    const key = await pump.next();
    if (key.payload[0] !== PacketHeader.AuthMoreData) throw MysqlEdgeErrors.backendProtocol(backend, 'no RSA public key after the key request');
    encodeAuthData(this.w, (key.sequenceId + 1) & 0xff, encryptPasswordWithPublicKey(cleartext.toString('utf8'), this.scramble, key.payload.subarray(1)));
    socket.write(this.w.flush());
    // the server's answer (sequence key + 2) is the answer to the client's reply
    return reply.sequenceId + 1 - (key.sequenceId + 2);
  }

  private refused(packet: MysqlPacket, shift: number): Extract<PassthroughOutcome, { kind: 'refused' }> {
    const err = decodeErr(packet.payload);
    this.socket?.destroy();
    return { kind: 'refused', err: { code: err.code, sqlState: err.sqlState ?? 'HY000', message: err.message }, seq: (packet.sequenceId + shift) & 0xff, plugin: this.plugin };
  }

  /** A server packet as the client gets it: `shift` added to its sequence id. */
  private toClient(packet: MysqlPacket, shift: number): Buffer {
    const seq = (packet.sequenceId + shift) & 0xff;
    this.nextClientSeq = (seq + 1) & 0xff;
    return this.renumbered(packet, seq);
  }

  private renumbered(packet: MysqlPacket, seq: number): Buffer {
    encodeAuthData(this.w, seq, packet.payload);
    return this.w.flush();
  }
}

const FAST_AUTH_SUCCESS = CachingSha2Message.FastAuthSuccess;
