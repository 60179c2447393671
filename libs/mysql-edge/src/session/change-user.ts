// COM_CHANGE_USER, answered by the edge: the session's state is reset as by
// COM_RESET_CONNECTION, then the new account authenticates against the scramble of the greeting
// (with an auth switch when its plugin differs), and the session takes its schema and charset.
import { Buffer } from 'node:buffer';
import {
  CACHING_SHA2_PLUGIN,
  CachingSha2Message,
  PacketWriter,
  ServerAuthExchange,
  decodeCommand,
  encodeAuthMoreData,
  encodeAuthSwitchRequest,
  encodeOk,
  encodingForCollation,
  type MysqlPacket,
  type ServerAuthStep,
} from '@dbproxy/protocol-mysql';
import { peerAddress, publishOperationalEvent } from '@dbproxy/util';
import { collationKey } from '../backend/collations';
import { MysqlEdgeErrors } from '../errors';
import type { ClientSession } from './client-session';

type ChangeUser = Extract<ReturnType<typeof decodeCommand>, { kind: 'change-user' }>;

export class ChangeUserExchange {
  private readonly writer = new PacketWriter(128);

  private constructor(
    private readonly session: ClientSession,
    private readonly exchange: ServerAuthExchange,
    private readonly request: ChangeUser,
  ) {}

  static start(s: ClientSession, p: MysqlPacket): void {
    const request = decodeCommand(p.payload, { capabilities: s.capabilities, encoding: s.encoding });
    if (request.kind !== 'change-user') throw MysqlEdgeErrors.protocol('not a COM_CHANGE_USER');
    s.resetState();
    const epoch = s.currentEpoch();
    const edge = s.edge;
    const exchange = new ServerAuthExchange({
      scramble: s.scramble ?? Buffer.alloc(20),
      account: epoch.accounts.get(request.username) ?? null,
      cacheKey: request.username,
      secure: s.secure,
      sha2Cache: edge.sha2Cache,
      ...(edge.rsa ? { rsa: edge.rsa } : {}),
    });
    const change = new ChangeUserExchange(s, exchange, request);
    s.changeUser = change;
    s.transition('reauth', 'COM_CHANGE_USER');
    change.answer(exchange.start({ authPlugin: request.authPlugin, authResponse: request.authResponse }), 1);
  }

  next(packet: MysqlPacket): void {
    this.answer(this.exchange.next(packet.payload), packet.sequenceId + 1);
  }

  private answer(step: ServerAuthStep, seq: number): void {
    const s = this.session;
    const w = this.writer;
    switch (step.kind) {
      case 'more-data':
        encodeAuthMoreData(w, seq, step.data);
        return s.send(w.flush());
      case 'switch':
        encodeAuthSwitchRequest(w, seq, step.plugin, step.data);
        return s.send(w.flush());
      case 'reject':
        s.changeUser = null;
        s.edge.metrics.logins.inc({ result: 'denied', plugin: 'change_user', tls: String(s.secure) });
        publishOperationalEvent({ event: 'login_failed', protocol: 'mysql', client: peerAddress(s.socket), user: this.request.username, listener: s.listener, reason: `COM_CHANGE_USER: ${step.reason}` });
        return s.fatal(MysqlEdgeErrors.accessDenied(this.request.username, s.socket.remoteAddress ?? 'unknown', this.request.authResponse.length > 0 ? 'YES' : 'NO'), seq);
      case 'accept':
        return this.accept(step.fastAuthSuccess, seq);
    }
  }

  private accept(fastAuthSuccess: boolean, seq: number): void {
    const s = this.session;
    const request = this.request;
    s.changeUser = null;
    s.user = request.username;
    s.schema = request.database === '' ? null : request.database;
    if (request.characterSet !== null) {
      s.collation = request.characterSet & 0xff;
      s.charsetKey = collationKey(s.collation);
      s.encoding = encodingForCollation(s.collation);
    }
    const w = this.writer;
    let next = seq;
    if (fastAuthSuccess) next = encodeAuthMoreData(w, next, Buffer.of(CachingSha2Message.FastAuthSuccess));
    encodeOk(w, next, { statusFlags: s.status() }, s.capabilities);
    s.send(w.flush());
    const plugin = s.currentEpoch().accounts.get(request.username)?.plugin ?? CACHING_SHA2_PLUGIN;
    s.edge.metrics.logins.inc({ result: 'ok', plugin, tls: String(s.secure) });
    s.transition('ready', 'user changed');
    s.deadline = s.edge.clock.now + s.epoch.limits.clientReadTimeoutMs;
  }
}
