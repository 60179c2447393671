// Commands the proxy answers itself: PING, ECHO, QUIT, RESET, CLIENT ID, CLIENT GETNAME and
// CLIENT SETINFO (library metadata, kept by the proxy: backend connections are shared).
import { Buffer } from 'node:buffer';
import { encodeBulk, encodeInteger, type CommandBatch } from '@dbproxy/resp';
import { RedisEdgeErrors } from '../errors';
import { DEFAULT_STATE } from '../io/endpoint';
import type { CommandSpec } from './command-table';
import type { CommandSession } from './session';

const PONG = Buffer.from('+PONG\r\n');
const OK = Buffer.from('+OK\r\n');
const RESET = Buffer.from('+RESET\r\n');
const NULL_RESP2 = Buffer.from('$-1\r\n');
const NULL_RESP3 = Buffer.from('_\r\n');

export function nullReply(s: CommandSession): Buffer {
  return s.state.protocol === 3 ? NULL_RESP3 : NULL_RESP2;
}

/** PING while subscribed on RESP2 answers `*2 pong <message>`, as Redis does. */
function subscribedPong(message: Buffer): Buffer {
  return Buffer.concat([Buffer.from('*2\r\n$4\r\npong\r\n'), encodeBulk(message)]);
}

function ping(s: CommandSession, batch: CommandBatch, i: number): void {
  const argc = batch.argCount[i];
  if (argc > 2) return s.replyError(RedisEdgeErrors.wrongArguments('ping'));
  const message = argc === 2 ? batch.argToBuffer(i, 1) : Buffer.alloc(0);
  if (s.subscriber?.subscribed && s.state.protocol === 2) return s.reply(subscribedPong(message));
  s.reply(argc === 2 ? encodeBulk(message) : PONG);
}

export function localCommand(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  switch (spec.name) {
    case 'ping':
      return ping(s, batch, i);
    case 'echo':
      if (batch.argCount[i] !== 2) return s.replyError(RedisEdgeErrors.wrongArguments('echo'));
      return s.reply(encodeBulk(batch.argToBuffer(i, 1)));
    case 'quit':
      s.reply(OK);
      s.quitting = true;
      return;
    case 'reset':
      return reset(s);
    case 'client|id':
      return s.reply(encodeInteger(s.id));
    case 'client|getname':
      return s.reply(s.state.name ? encodeBulk(s.state.name) : nullReply(s));
    case 'client|setinfo':
      return clientSetInfo(s, batch, i);
    default:
      return s.replyError(RedisEdgeErrors.unsupported(spec.display, 'no local implementation'), 'unsupported');
  }
}

function clientSetInfo(s: CommandSession, batch: CommandBatch, i: number): void {
  if (batch.argCount[i] !== 4) return s.replyError(RedisEdgeErrors.wrongArguments('client|setinfo'));
  if (!batch.argEquals(i, 2, 'LIB-NAME') && !batch.argEquals(i, 2, 'LIB-VER')) return s.replyError(RedisEdgeErrors.syntax());
  s.reply(OK);
}

/** RESET: back to a fresh connection's state (no transaction, no subscriptions, shared connections). */
function reset(s: CommandSession): void {
  if (s.ring.outstanding > 0) return s.retryAfterDrain();
  s.tx = undefined;
  s.watch = undefined;
  s.subscriber?.close('RESET');
  s.subscriber = undefined;
  s.dropOwnLinksExcept(undefined);
  s.own = undefined;
  s.state = DEFAULT_STATE;
  if (!s.machine.is('ready')) s.machine.transition(s.machine.state, 'ready', 'RESET');
  s.reply(RESET);
}
