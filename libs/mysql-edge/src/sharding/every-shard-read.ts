// A keyless read of a sharded table under multi_shard = "all_shards" (COM_QUERY, or COM_STMT_EXECUTE
// with the statement prepared lazily on each shard's connection): the statement runs on every
// shard at once (a replica of each where one is usable, as any read), each response is collected,
// and the client gets one result set: the first shard's column definitions, the rows of every
// shard in shard order, one terminator, sequence ids renumbered. Only plain concatenable reads get
// here (shard-target.ts refuses ORDER BY, LIMIT, GROUP BY, aggregates, DISTINCT...).
import { Buffer } from 'node:buffer';
import type { Lease } from '@dbproxy/pool';
import type { ProxiedAddresses } from '@dbproxy/runtime';
import { Capability, Command, hasFlag, type MysqlPacket, type ResponseSummary } from '@dbproxy/protocol-mysql';
import { DbproxyError } from '@dbproxy/util';
import { Mode, queryPacket, type BackendConnection, type ResponseSink } from '../backend/backend-connection';
import type { EdgeContext } from '../edge-context';
import type { EdgeEpoch } from '../epoch';
import { MysqlEdgeErrors, reportInternal, toMysqlError, type MysqlError } from '../errors';
import { lastFrameSeq } from '../backend/frame-seq';
import type { BackendStatement } from '../backend/statement-catalog';
import { executeFor, initDbPacket, preparePacket } from '../session/command-packets';
import type { ClientStatement } from '../session/statement-registry';

/** The client's command: a text query, or an execute of a prepared statement (prepared lazily on each shard). */
export type EveryShardCommand =
  | { readonly kind: 'query'; readonly packet: MysqlPacket }
  | { readonly kind: 'execute'; readonly packet: MysqlPacket; readonly statement: ClientStatement };

export interface EveryShard {
  readonly kind: 'all';
  readonly shards: readonly string[];
}

/** What the read needs from its session. */
export interface EveryShardOwner {
  readonly edge: EdgeContext;
  readonly epoch: EdgeEpoch;
  readonly profile: number;
  /** The client's addresses, for backends with proxy_protocol (see backend/proxy-origin.ts). */
  readonly origin?: ProxiedAddresses;
  readonly schema: string | null;
  readonly charsetKey: string;
  readonly listener: 'read_write' | 'read_only';
  readonly closed: boolean;
  charsetStatement(): string;
  readAfterWrite(shard: string): boolean;
  /** The reply: one result set, or an ERR. */
  send(bytes: Buffer): void;
  sendError(err: MysqlError, seq: number): void;
  commandDone(fatal: boolean): void;
}

const TAG_SETUP = 1;
const TAG_MAIN = 2;
const TAG_PREPARE = 3;

/** One shard's part: a pooled connection that runs the statement and keeps its response bytes. */
class ShardPart implements ResponseSink {
  private readonly chunks: Buffer[] = [];
  private command: EveryShardCommand | null = null;
  private resolve: (outcome: Buffer | DbproxyError | MysqlError) => void = () => undefined;
  readonly done: Promise<Buffer | DbproxyError | MysqlError>;

  constructor(
    readonly lease: Lease<BackendConnection>,
    /** max_result_bytes, shared by every shard's part: the merged result is bounded like any other. */
    private readonly budget: { left: number; readonly limit: number },
  ) {
    this.done = new Promise((r) => (this.resolve = r));
  }

  run(owner: EveryShardOwner, command: EveryShardCommand): void {
    const conn = this.lease.connection;
    this.command = command;
    conn.attach(this, 'lend');
    const parts: Buffer[] = [];
    // a statement is prepared in the database the client prepared it in (MariaDB binds it then)
    const bs = command.kind === 'execute' ? conn.statements.get(command.statement.entry) : undefined;
    const schema = command.kind === 'execute' && bs === undefined ? command.statement.entry.schema : owner.schema;
    if (schema !== null && conn.schema !== schema) {
      parts.push(initDbPacket(schema));
      conn.expect(Command.InitDb, Mode.Swallow, TAG_SETUP, this);
      conn.schema = schema;
    }
    if (conn.charsetKey !== owner.charsetKey) {
      parts.push(queryPacket(owner.charsetStatement()));
      conn.expect(Command.Query, Mode.Swallow, TAG_SETUP, this);
      conn.charsetKey = owner.charsetKey;
    }
    if (command.kind === 'query') {
      parts.push(command.packet.wire);
      conn.expect(Command.Query, Mode.Forward, TAG_MAIN, this, 0, 0);
    } else if (bs === undefined) {
      const prepare = preparePacket(command.statement.entry.sql);
      parts.push(prepare);
      conn.expect(Command.StmtPrepare, Mode.Swallow, TAG_PREPARE, this, lastFrameSeq(prepare));
    } else parts.push(this.execute(conn, command, bs));
    conn.writev(parts);
  }

  private execute(conn: BackendConnection, command: EveryShardCommand & { kind: 'execute' }, bs: BackendStatement): Buffer {
    const packet = executeFor(command.packet, command.statement, bs);
    conn.expect(Command.StmtExecute, Mode.Forward, TAG_MAIN, this, lastFrameSeq(packet), 0);
    return packet;
  }

  deliver(slices: Buffer[]): void {
    if (this.budget.left < 0) return; // already answered: the rest is dropped, the connection closed on release
    for (const slice of slices) {
      this.budget.left -= slice.length;
      this.chunks.push(Buffer.from(slice));
    }
    if (this.budget.left < 0) {
      this.chunks.length = 0;
      this.resolve(MysqlEdgeErrors.resultTooLarge(this.budget.limit));
    }
  }

  responseEnd(tag: number, summary: ResponseSummary): void {
    const err = summary.err;
    if (tag === TAG_SETUP) {
      if (err) this.resolve({ code: err.code, sqlState: err.sqlState ?? 'HY000', message: err.message });
      return;
    }
    if (tag === TAG_PREPARE) {
      const command = this.command;
      const conn = this.lease.connection;
      if (err) return this.resolve({ code: err.code, sqlState: err.sqlState ?? 'HY000', message: err.message });
      if (!summary.prepared || command?.kind !== 'execute') return this.resolve(MysqlEdgeErrors.backendProtocol(conn.backend, 'prepare answered without a statement'));
      const bs = conn.statements.add(command.statement.entry, summary.prepared.statementId, summary.prepared.paramCount);
      return conn.writev([this.execute(conn, command, bs)]);
    }
    if (err) return this.resolve({ code: err.code, sqlState: err.sqlState ?? 'HY000', message: err.message });
    this.resolve(Buffer.concat(this.chunks));
  }

  connectionFailed(err: DbproxyError): void {
    this.resolve(err);
  }

  /** query_timeout_seconds passed: the answer is the timeout (the connection is closed on release). */
  timeout(err: DbproxyError): void {
    this.resolve(err);
  }

  release(ok: boolean): void {
    const conn = this.lease.connection;
    conn.detach(this, ok ? 'released' : 'failed');
    if (!ok) conn.close('every-shard-read-failed');
    this.lease.pool.release(this.lease, ok ? { reusable: true } : { reusable: false, reason: 'every-shard-read-failed' });
  }
}

/** A pooled connection to the shard's replica (or its primary: read-after-write, no usable replica). */
async function leaseFor(owner: EveryShardOwner, shard: string): Promise<Lease<BackendConnection>> {
  const e = owner.epoch;
  const edge = owner.edge;
  const role = owner.listener === 'read_write' && owner.readAfterWrite(shard) ? 'primary' : 'replica';
  const fallback = e.fallbackToPrimary && owner.listener === 'read_write';
  const pressure = (backend: string): number => edge.pools.pressure(backend, owner.profile, owner.origin);
  const backend = e.directory.choose(shard, role, fallback, pressure, edge.clock.now);
  if (backend === undefined) throw e.directory.unusable(shard, role, fallback, edge.clock.now);
  const pool = edge.pools.pool(backend.name, owner.profile, owner.origin);
  if (pool === undefined) throw MysqlEdgeErrors.noBackend(role, shard, `backend "${backend.name}" is not in configuration epoch ${e.epoch}`);
  edge.queries.count('all_shards', backend.role === 'replica' ? 'replica' : 'primary', backend.name);
  return pool.tryAcquire() ?? (await pool.acquire({ reserved: false }));
}

/** Runs the read on every shard and answers the client once all have answered (or one failed). */
export async function runEveryShard(owner: EveryShardOwner, command: EveryShardCommand, shards: readonly string[], replySeq: number): Promise<void> {
  const limit = owner.epoch.config.mysql.max_result_bytes;
  const budget = { left: limit, limit };
  const settled = await Promise.allSettled(shards.map((shard) => leaseFor(owner, shard)));
  const parts: ShardPart[] = [];
  let failure: unknown = null;
  for (const s of settled) {
    if (s.status === 'fulfilled') parts.push(new ShardPart(s.value, budget));
    else failure ??= s.reason;
  }
  let outcomes: (Buffer | DbproxyError | MysqlError)[] = [];
  if (failure === null && !owner.closed) {
    const limits = owner.epoch.limits;
    const timer = setTimeout(() => {
      for (const part of parts) part.timeout(MysqlEdgeErrors.queryTimeout(Math.round(limits.queryTimeoutMs / 1000)));
    }, limits.queryTimeoutMs);
    for (const part of parts) part.run(owner, command);
    outcomes = await Promise.all(parts.map((p) => p.done));
    clearTimeout(timer);
  }
  const deprecateEof = parts.length > 0 && hasFlag((parts[0] as ShardPart).lease.connection.capabilities, Capability.DeprecateEof);
  const responses = outcomes.filter((o): o is Buffer => Buffer.isBuffer(o));
  const failed = outcomes.find((o) => !Buffer.isBuffer(o));
  for (const part of parts) part.release(failure === null && failed === undefined);
  if (owner.closed) return;
  failure ??= failed ?? null;
  if (failure !== null) {
    // a server's ERR is a plain { code: number, ... }; anything else (an OS error's code is a string) goes through the translator
    const serverErr = !(failure instanceof Error) && typeof (failure as Partial<MysqlError>).code === 'number';
    const wire = serverErr ? (failure as MysqlError) : toMysqlError(reportInternal(failure, owner.edge.logger, { while: 'read on every shard' }));
    owner.sendError(wire, replySeq);
    return owner.commandDone(false);
  }
  const merged = concatenate(responses, deprecateEof, replySeq);
  if (merged instanceof DbproxyError) owner.sendError(toMysqlError(merged), replySeq);
  else owner.send(merged);
  owner.commandDone(false);
}

/** Frames of one response: [start, end) of each packet (header included). */
function framesOf(response: Buffer): [number, number][] {
  const frames: [number, number][] = [];
  let at = 0;
  while (at + 4 <= response.length) {
    const end = at + 4 + response.readUIntLE(at, 3);
    frames.push([at, end]);
    at = end;
  }
  return frames;
}

interface ResultParts {
  readonly head: [number, number][];
  readonly rows: [number, number][];
  readonly tail: [number, number];
  readonly columns: number;
}

function lengthEncoded(b: Buffer, at: number): number {
  const first = b[at] as number;
  if (first < 0xfb) return first;
  if (first === 0xfc) return b.readUInt16LE(at + 1);
  if (first === 0xfd) return b.readUIntLE(at + 1, 3);
  return Number(b.readBigUInt64LE(at + 1));
}

/** Splits a text result set into column count + definitions (+ EOF), rows, terminator. */
function splitResult(response: Buffer, deprecateEof: boolean): ResultParts | null {
  const frames = framesOf(response);
  const first = frames[0];
  if (first === undefined || response[first[0] + 4] === 0x00 || response[first[0] + 4] === 0xff) return null;
  const columns = lengthEncoded(response, first[0] + 4);
  const headCount = 1 + columns + (deprecateEof ? 0 : 1);
  const last = frames[frames.length - 1] as [number, number];
  if (frames.length < headCount + 1 || response[last[0] + 4] !== 0xfe) return null;
  return { head: frames.slice(0, headCount), rows: frames.slice(headCount, frames.length - 1), tail: last, columns };
}

function concatenate(responses: readonly Buffer[], deprecateEof: boolean, replySeq: number): Buffer | DbproxyError {
  const split = responses.map((r) => splitResult(r, deprecateEof));
  const base = split[0];
  if (base === undefined || base === null || split.some((s) => s === null || s.columns !== base.columns)) {
    return MysqlEdgeErrors.backendProtocol('every shard', 'the shards answered with different result shapes');
  }
  const pieces: Buffer[] = [];
  const take = (response: Buffer, [start, end]: [number, number]) => pieces.push(response.subarray(start, end));
  const first = responses[0] as Buffer;
  for (const frame of base.head) take(first, frame);
  split.forEach((parts, i) => {
    for (const frame of (parts as ResultParts).rows) take(responses[i] as Buffer, frame);
  });
  take(responses[responses.length - 1] as Buffer, (split[split.length - 1] as ResultParts).tail);
  const out = Buffer.concat(pieces);
  let seq = replySeq;
  for (const [start] of framesOf(out)) {
    out[start + 3] = seq;
    seq = (seq + 1) & 0xff;
  }
  return out;
}
