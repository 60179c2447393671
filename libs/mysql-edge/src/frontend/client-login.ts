// Login of one client: the greeting (handshake v10), an optional SSLRequest and TLS upgrade, then
// authentication of a [[users]] account with caching_sha2_password (fast auth from a digest
// cache, full auth over TLS or with the RSA key exchange) or mysql_native_password; or, with
// [mysql] auth = "passthrough", the HandshakeResponse handed to the backend relay (src/passthrough).
import { Buffer } from 'node:buffer';
import { randomBytes, type KeyLike } from 'node:crypto';
import {
  CACHING_SHA2_PLUGIN,
  Capability,
  CachingSha2Message,
  DEFAULT_SERVER_CAPABILITIES,
  PacketWriter,
  ServerAuthExchange,
  ServerStatus,
  decodeClientHandshake,
  encodeAuthMoreData,
  encodeAuthSwitchRequest,
  encodeInitialHandshake,
  encodeOk,
  type AccountCredential,
  type HandshakeResponse,
  type MysqlPacket,
  type ServerAuthStep,
  type Sha2DigestCache,
} from '@dbproxy/protocol-mysql';
import type { HandshakeRoutes, RouteChoice } from '@dbproxy/routing';
import { DbproxyError } from '@dbproxy/util';
import { MysqlEdgeErrors } from '../errors';
import { BACKEND_COLLATION } from '../backend/collations';
import { clientProfile } from '../backend/backend-pools';
import type { Logger } from '@dbproxy/observability';
import type { FrontendTls } from '@dbproxy/runtime';
import type { Negotiated, PassthroughRelay } from '../passthrough/passthrough-session';

/** What the edge offers clients: MySQL-style (CLIENT_MYSQL set), no compression, no query attributes; LOCAL INFILE only with mysql.local_infile. */
export const FRONTEND_CAPABILITIES = DEFAULT_SERVER_CAPABILITIES;

export interface RsaKeys {
  readonly privateKey: KeyLike;
  readonly publicKeyPem: string;
}

export interface LoginSettings {
  readonly serverVersion: string;
  /** MariaDB extended capabilities offered (every backend has them); non-zero makes the greeting MariaDB-style (no CLIENT_MYSQL). */
  readonly mariaDbCapabilities: number;
  readonly accounts: ReadonlyMap<string, AccountCredential>;
  readonly tls: FrontendTls;
  readonly rsa: RsaKeys | undefined;
  readonly sha2Cache: Sha2DigestCache;
  readonly remoteHost: string;
  /** Where refused logins are logged with the reason the client is not told. */
  readonly logger: Logger;
  /** Offer CLIENT_LOCAL_FILES ([mysql] local_infile). */
  readonly localInfile: boolean;
  /** [[mysql.routes]]: the handshake response's database and user pick the session's shard. */
  readonly routes: HandshakeRoutes;
}

export interface LoginResult {
  readonly user: string;
  readonly database: string | null;
  /** Capabilities in force: the client's ∩ ours. */
  readonly capabilities: number;
  /** The backend pool profile: response-shaping flags and MariaDB extended metadata. */
  readonly profile: number;
  readonly collation: number;
  readonly plugin: string;
  readonly secure: boolean;
  /** The handshake route and its shard (null: no routes configured, the default shard serves). */
  readonly route: RouteChoice | null;
}

export interface LoginHost {
  send(bytes: Buffer): void;
  loginDone(result: LoginResult, seq: number): void;
  /**
   * [mysql] auth = "passthrough": the host relays this login to a backend (src/passthrough) and
   * returns where the client's next auth packets go; null: the edge authenticates [[users]] itself.
   */
  passthrough(hello: HandshakeResponse, helloSeq: number, negotiated: Negotiated, route: RouteChoice | null | undefined): PassthroughRelay | null;
  /** `refusal` is for the operators' log line (the reason the client is not told); never the password. */
  loginFailed(err: unknown, seq: number, plugin: string, refusal: { readonly user: string; readonly reason: string }): void;
}

/** Scramble bytes a C client can carry as a string: printable ASCII, no NUL. */
export function newScramble(): Buffer {
  const bytes = randomBytes(20);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 0x21 + ((bytes[i] as number) % 94);
  return bytes;
}

type Phase = 'hello' | 'auth' | 'relay' | 'done';

export class ClientLogin {
  readonly scramble = newScramble();
  private phase: Phase = 'hello';
  private secure = false;
  /** Set by an SSLRequest: the session upgrades its socket, then calls secured(). */
  wantsTls = false;
  private exchange: ServerAuthExchange | null = null;
  private relay: PassthroughRelay | null = null;
  private response: HandshakeResponse | null = null;
  /** Chosen from the handshake response (after TLS); undefined: routes are configured and none matched. */
  private route: RouteChoice | null | undefined = null;
  private readonly writer = new PacketWriter(128);

  constructor(
    private readonly host: LoginHost,
    private readonly settings: LoginSettings,
    private readonly connectionId: number,
  ) {}

  get capabilities(): number {
    const offered = FRONTEND_CAPABILITIES | (this.settings.tls.mode === 'disabled' ? 0 : Capability.Ssl) | (this.settings.localInfile ? Capability.LocalFiles : 0);
    // MariaDB servers leave CLIENT_MYSQL (LONG_PASSWORD) unset to carry extended capabilities
    return (this.settings.mariaDbCapabilities !== 0 ? offered & ~Capability.LongPassword : offered) >>> 0;
  }

  greeting(): Buffer {
    encodeInitialHandshake(this.writer, {
      serverVersion: this.settings.serverVersion,
      connectionId: this.connectionId,
      scramble: this.scramble,
      capabilities: this.capabilities,
      characterSet: BACKEND_COLLATION,
      statusFlags: ServerStatus.Autocommit,
      mariaDbCapabilities: this.settings.mariaDbCapabilities,
      authPlugin: CACHING_SHA2_PLUGIN,
    });
    return this.writer.flush();
  }

  /** One client packet of the login; false stops framing (the rest of the chunk is TLS). */
  onPacket(packet: MysqlPacket): boolean {
    try {
      if (this.phase === 'hello') return this.onHello(packet);
      if (this.phase === 'relay') (this.relay as PassthroughRelay).clientPacket(packet);
      else if (this.phase === 'auth') this.answer((this.exchange as ServerAuthExchange).next(packet.payload), packet.sequenceId + 1);
    } catch (err) {
      // a codec error says what is wrong with the login; any other exception is the host's to log (its text never reaches the client)
      this.fail(err instanceof DbproxyError && !err.code.startsWith('DBP_ERR_MYSQLEDGE_') ? MysqlEdgeErrors.handshake(err.message) : err, packet.sequenceId + 1);
    }
    return true;
  }

  /** TLS is up: the HandshakeResponse comes next. */
  secured(): void {
    this.secure = true;
    this.wantsTls = false;
  }

  private onHello(packet: MysqlPacket): boolean {
    const hello = decodeClientHandshake(packet.payload);
    const seq = packet.sequenceId + 1;
    if (hello.kind === 'ssl-request') {
      if (this.settings.tls.mode === 'disabled' || this.secure) throw MysqlEdgeErrors.handshake('SSL was not offered');
      this.wantsTls = true;
      return false;
    }
    if (this.settings.tls.mode === 'required' && !this.secure) {
      this.fail(MysqlEdgeErrors.tlsRequired(), seq);
      return true;
    }
    this.response = hello;
    // the cluster is chosen here, before authentication; a login no route matches is refused once its password is checked (as a server answers 1049)
    if (this.settings.routes.active) this.route = this.settings.routes.choose(hello.database ?? '', hello.username) ?? undefined;
    const relay = this.host.passthrough(hello, packet.sequenceId, this.negotiated(hello), this.route);
    if (relay !== null) {
      this.relay = relay;
      this.phase = 'relay';
      return true;
    }
    const account = this.settings.accounts.get(hello.username) ?? null;
    this.exchange = new ServerAuthExchange({
      scramble: this.scramble,
      account,
      cacheKey: hello.username,
      secure: this.secure,
      sha2Cache: this.settings.sha2Cache,
      ...(this.settings.rsa ? { rsa: this.settings.rsa } : {}),
    });
    this.phase = 'auth';
    this.answer(this.exchange.start(hello), seq);
    return true;
  }

  private answer(step: ServerAuthStep, seq: number): void {
    const w = this.writer;
    switch (step.kind) {
      case 'more-data':
        encodeAuthMoreData(w, seq, step.data);
        return this.host.send(w.flush());
      case 'switch':
        encodeAuthSwitchRequest(w, seq, step.plugin, step.data);
        return this.host.send(w.flush());
      case 'reject':
        return this.fail(MysqlEdgeErrors.accessDenied(this.response?.username ?? '', this.settings.remoteHost, this.response?.authResponse.length ? 'YES' : 'NO'), seq, this.settings.accounts.has(this.response?.username ?? '') ? step.reason : 'unknown user');
      case 'accept':
        return this.accept(step.fastAuthSuccess, seq);
    }
  }

  /** Capabilities in force (the client's ∩ ours) and the backend pool profile they make. */
  private negotiated(response: HandshakeResponse): Negotiated {
    const capabilities = (response.capabilities & this.capabilities) >>> 0;
    return { capabilities, profile: clientProfile(capabilities, response.mariaDbCapabilities & this.settings.mariaDbCapabilities), secure: this.secure };
  }

  private accept(fastAuthSuccess: boolean, seq: number): void {
    const response = this.response as HandshakeResponse;
    if (this.route === undefined) return this.fail(MysqlEdgeErrors.noRoute(response.database ?? ''), seq, `no route matches database '${response.database ?? ''}'`);
    const { capabilities, profile } = this.negotiated(response);
    const w = this.writer;
    let next = seq;
    if (fastAuthSuccess) next = encodeAuthMoreData(w, next, Buffer.of(CachingSha2Message.FastAuthSuccess));
    next = encodeOk(w, next, { statusFlags: ServerStatus.Autocommit }, capabilities);
    this.phase = 'done';
    const account = this.settings.accounts.get(response.username);
    this.host.send(w.flush());
    this.host.loginDone(
      {
        user: response.username,
        database: response.database === '' ? null : response.database,
        capabilities,
        profile,
        collation: response.characterSet,
        plugin: account?.plugin ?? CACHING_SHA2_PLUGIN,
        secure: this.secure,
        route: this.route ?? null,
      },
      next,
    );
  }

  private fail(err: unknown, seq: number, reason?: string): void {
    this.phase = 'done';
    const user = this.response?.username ?? '';
    const plugin = this.settings.accounts.get(user)?.plugin ?? 'unknown';
    this.host.loginFailed(err, seq, plugin, { user, reason: reason ?? (err instanceof DbproxyError ? err.message : 'internal error') });
  }
}
