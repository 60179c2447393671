// HELLO, AUTH, SELECT and CLIENT SETNAME: run on the session's own connection to its home node
// once nothing else is owed; on success the new state is replayed on every connection the
// session opens later (connections opened with the old state are closed).
import { Buffer } from 'node:buffer';
import type { CommandBatch, Redirect } from '@dbproxy/resp';
import { RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import type { ClientAuth, ConnectionState } from '../io/endpoint';
import type { ReplySink, SentFrame } from '../io/reply-sink';
import type { CommandSpec } from './command-table';
import type { CommandSession } from './session';

const OK = Buffer.from('+OK\r\n');
const ERROR = 0x2d; // '-'
const BULK_ERROR = 0x21; // '!'

class StateSink implements ReplySink {
  constructor(
    private readonly session: CommandSession,
    private readonly next: ConnectionState,
    private readonly link: BackendLink,
  ) {}

  deliver(seq: number, _part: number, buf: Buffer, start: number, end: number): void {
    if (buf[start] !== ERROR && buf[start] !== BULK_ERROR && !this.session.closed) {
      this.session.state = this.next;
      this.session.dropOwnLinksExcept(this.link);
    }
    this.session.deliver(seq, -1, buf, start, end);
  }

  fail(seq: number, part: number, err: Error): void {
    this.session.fail(seq, part, err);
  }

  redirect(_seq: number, _part: number, _redirect: Redirect, _frame: SentFrame, _flags: number): boolean {
    return false;
  }
}

const copy = (b: Buffer): Buffer => Buffer.from(b);

function authOf(batch: CommandBatch, i: number, at: number, count: number): ClientAuth {
  return count === 1 ? { username: undefined, password: copy(batch.argToBuffer(i, at)) } : { username: copy(batch.argToBuffer(i, at)), password: copy(batch.argToBuffer(i, at + 1)) };
}

function helloState(state: ConnectionState, batch: CommandBatch, i: number): ConnectionState {
  const argc = batch.argCount[i];
  if (argc < 2) return state;
  const version = batch.argToInt(i, 1);
  let next: ConnectionState = { ...state, protocol: version === 3 ? 3 : version === 2 ? 2 : state.protocol };
  for (let k = 2; k < argc; ) {
    if (batch.argEquals(i, k, 'AUTH') && k + 2 < argc) {
      next = { ...next, auth: authOf(batch, i, k + 1, 2) };
      k += 3;
    } else if (batch.argEquals(i, k, 'SETNAME') && k + 1 < argc) {
      next = { ...next, name: copy(batch.argToBuffer(i, k + 1)) };
      k += 2;
    } else return state; // the server answers the syntax error; nothing changes
  }
  return next;
}

/** The state after the command succeeds, or an error the proxy answers itself. */
function nextState(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): ConnectionState | Error {
  const argc = batch.argCount[i];
  const state = s.state;
  switch (spec.name) {
    case 'select': {
      const db = batch.argToInt(i, 1);
      return Number.isSafeInteger(db) && db >= 0 ? { ...state, db } : state;
    }
    case 'auth':
      if (argc !== 2 && argc !== 3) return RedisEdgeErrors.wrongArguments('auth');
      return { ...state, auth: authOf(batch, i, 1, argc - 1) };
    case 'client|setname': {
      if (argc !== 3) return RedisEdgeErrors.wrongArguments('client|setname');
      const name = batch.argToBuffer(i, 2);
      return { ...state, name: name.length === 0 ? undefined : copy(name) };
    }
    default:
      return helloState(state, batch, i);
  }
}

/** SELECT answered without a backend: on a cluster (only 0 exists), or when it selects what is selected already. */
function selectLocally(s: CommandSession, batch: CommandBatch, i: number): boolean {
  if (batch.argCount[i] !== 2) return false;
  const db = batch.argToInt(i, 1);
  if (s.edge.routes.cluster) {
    if (db === 0) s.reply(OK);
    else s.replyError(RedisEdgeErrors.selectInCluster());
    return true;
  }
  const current = s.state.db;
  const same = current !== undefined ? current === db : s.edge.routes.shards.every((shard) => shard.primary === undefined || shard.primary.endpoint.db === db);
  if (same) s.reply(OK);
  return same;
}

export function stateCommand(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  if (spec.name === 'select' && selectLocally(s, batch, i)) return;
  if (s.ring.outstanding > 0) return s.retryAfterDrain();
  const next = nextState(s, batch, i, spec);
  if (next instanceof Error) return s.replyError(next);
  const home = s.homeRoute();
  if (!home) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', s.edge.routes.shardName()));
  const link = s.ownLink(home);
  link.send(new StateSink(s, next, link), s.ring.reserve(), -1, 0, 0, batch.buffer, batch.frameStart[i], batch.frameEnd[i]);
  s.holdUntilDrained();
}
