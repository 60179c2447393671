// Client side of authentication: builds the HandshakeResponse41 and answers the server until OK or ERR.
import { Buffer } from 'node:buffer';
import type { KeyLike } from 'node:crypto';
import { Capability, DEFAULT_CLIENT_CAPABILITIES, hasFlag, intersectFlags } from '../capabilities';
import { Collation } from '../charsets';
import { AuthProtocolError } from '../errors';
import type { InitialHandshake } from '../handshake';
import type { HandshakeResponseFields } from '../handshake-response';
import { decodeServerAuthReply, scrambleFromPluginData } from '../packets/auth';
import type { ErrPacket } from '../packets/err';
import type { OkPacket } from '../packets/ok';
import { CACHING_SHA2_PLUGIN, CachingSha2Message, cachingSha2Token, encryptPasswordWithPublicKey } from './caching-sha2';
import { NATIVE_PASSWORD_PLUGIN, nativePasswordToken } from './native';

const CLEAR_PASSWORD_PLUGIN = 'mysql_clear_password';

export interface ClientAuthOptions {
  readonly username: string;
  readonly password: string;
  readonly database?: string | null;
  /** True when the connection is already TLS (after an SSLRequest): cleartext full auth is then allowed. */
  readonly secure?: boolean;
  /** A server public key known in advance (saves the 0x02 round trip). */
  readonly serverPublicKey?: KeyLike;
  /** Capabilities the client wants; intersected with the server's. */
  readonly capabilities?: number;
  readonly characterSet?: number;
  readonly maxPacketSize?: number;
  readonly connectAttributes?: ReadonlyMap<string, string>;
  /** MariaDB extended capabilities wanted; intersected with a MariaDB server's (0 against MySQL). */
  readonly mariaDbCapabilities?: number;
}

export type ClientAuthStep =
  | { readonly kind: 'send'; readonly data: Buffer }
  | { readonly kind: 'wait' }
  | { readonly kind: 'done'; readonly ok: OkPacket }
  | { readonly kind: 'failed'; readonly err: ErrPacket };

type Phase = 'greeting' | 'token-sent' | 'await-public-key' | 'final';

/** Drives one backend connection's authentication. */
export class ClientAuthExchange {
  private phase: Phase = 'greeting';
  private plugin = NATIVE_PASSWORD_PLUGIN as string;
  private scramble: Buffer = Buffer.alloc(0);
  /** Capabilities in force after `respond` (client wishes ∩ server offer). */
  capabilities = 0;
  /** MariaDB extended capabilities in force after `respond`. */
  mariaDbCapabilities = 0;

  constructor(private readonly options: ClientAuthOptions) {}

  /** The HandshakeResponse41 to send for the server's greeting. */
  respond(handshake: InitialHandshake): HandshakeResponseFields {
    const o = this.options;
    let wanted = o.capabilities ?? DEFAULT_CLIENT_CAPABILITIES;
    if (o.database) wanted |= Capability.ConnectWithDb;
    if (o.connectAttributes) wanted |= Capability.ConnectAttrs;
    if (o.secure) wanted |= Capability.Ssl;
    const mariaDb = intersectFlags(o.mariaDbCapabilities ?? 0, handshake.mariaDbCapabilities);
    // the server reads the extended capabilities only when CLIENT_MYSQL (LONG_PASSWORD) is unset
    if (mariaDb !== 0) wanted &= ~Capability.LongPassword;
    this.capabilities = (intersectFlags(wanted, handshake.capabilities) | Capability.Protocol41) >>> 0;
    this.mariaDbCapabilities = hasFlag(this.capabilities, Capability.LongPassword) ? 0 : mariaDb;
    this.scramble = handshake.scramble;
    this.plugin = handshake.authPlugin === CACHING_SHA2_PLUGIN ? CACHING_SHA2_PLUGIN : NATIVE_PASSWORD_PLUGIN;
    this.phase = 'token-sent';
    return {
      capabilities: this.capabilities,
      maxPacketSize: o.maxPacketSize ?? 0x01000000,
      characterSet: o.characterSet ?? Collation.utf8mb4_general_ci,
      mariaDbCapabilities: this.mariaDbCapabilities,
      username: o.username,
      authResponse: this.token(),
      database: o.database ?? null,
      authPlugin: this.plugin,
      connectAttributes: o.connectAttributes ?? null,
    };
  }

  /** Feeds one server packet of the authentication phase. */
  next(payload: Buffer): ClientAuthStep {
    if (this.phase === 'greeting' || this.phase === 'final') throw AuthProtocolError(`server packet in phase ${this.phase}`);
    const reply = decodeServerAuthReply(payload, this.capabilities);
    switch (reply.kind) {
      case 'ok':
        this.phase = 'final';
        return { kind: 'done', ok: reply };
      case 'err':
        this.phase = 'final';
        return { kind: 'failed', err: reply };
      case 'auth-switch':
        return this.switchPlugin(reply.plugin, reply.data);
      case 'auth-more-data':
        return this.moreData(reply.data);
    }
  }

  private token(): Buffer {
    const { password } = this.options;
    return this.plugin === CACHING_SHA2_PLUGIN ? cachingSha2Token(password, this.scramble) : nativePasswordToken(password, this.scramble);
  }

  private switchPlugin(plugin: string, data: Buffer): ClientAuthStep {
    this.scramble = scrambleFromPluginData(data);
    this.phase = 'token-sent';
    if (plugin === CLEAR_PASSWORD_PLUGIN) {
      if (!this.options.secure) throw AuthProtocolError('server asked for the cleartext password on a connection without TLS');
      return { kind: 'send', data: Buffer.from(`${this.options.password}\0`, 'utf8') };
    }
    if (plugin !== NATIVE_PASSWORD_PLUGIN && plugin !== CACHING_SHA2_PLUGIN) throw AuthProtocolError(`unsupported auth plugin ${plugin}`);
    this.plugin = plugin;
    return { kind: 'send', data: this.token() };
  }

  private moreData(data: Buffer): ClientAuthStep {
    if (this.plugin !== CACHING_SHA2_PLUGIN) throw AuthProtocolError(`AuthMoreData for plugin ${this.plugin}`);
    if (this.phase === 'await-public-key') return this.sendEncrypted(data.toString('utf8'));
    if (data.length === 1 && data[0] === CachingSha2Message.FastAuthSuccess) return { kind: 'wait' };
    if (data.length !== 1 || data[0] !== CachingSha2Message.PerformFullAuthentication) {
      throw AuthProtocolError(`unexpected caching_sha2_password message of ${data.length} bytes`);
    }
    if (this.options.secure) return { kind: 'send', data: Buffer.from(`${this.options.password}\0`, 'utf8') };
    if (this.options.serverPublicKey) return this.sendEncrypted(this.options.serverPublicKey);
    this.phase = 'await-public-key';
    return { kind: 'send', data: Buffer.of(CachingSha2Message.RequestPublicKey) };
  }

  private sendEncrypted(key: KeyLike): ClientAuthStep {
    this.phase = 'token-sent';
    return { kind: 'send', data: encryptPasswordWithPublicKey(this.options.password, this.scramble, key) };
  }
}

/** True when the handshake's server will read the MariaDB extended capabilities. */
export function isMariaDbHandshake(handshake: InitialHandshake): boolean {
  return !hasFlag(handshake.capabilities, Capability.LongPassword);
}
