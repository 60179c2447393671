// Handling of backend connections: commands written by the sessions that borrowed the connection
// (one, or several whose autocommit reads are pipelined), responses framed and tracked to their end
// in order without decoding rows, each routed to the session that wrote its command, forwarded
// packets handed over as slices of the socket's read buffer (one batch per chunk and session), and
// the connection's own state (replayed session settings, prepared statements, reset before reuse).
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import {
  Capability,
  Command,
  PacketFramer,
  ResponseTracker,
  ServerStatus,
  decodeErr,
  hasFlag,
  type ErrPacket,
  type MysqlPacket,
  type ResponseSummary,
} from '@dbproxy/protocol-mysql';
import type { Logger } from '@dbproxy/observability';
import { DbproxyError } from '@dbproxy/util';
import { MysqlEdgeErrors, reportInternal } from '../errors';
import type { StateTable } from '../state-machine';
import { collationKey, BACKEND_COLLATION } from './collations';
import type { OpenedBackend } from './backend-handshake';
import { BackendStatements } from './statement-catalog';
import { descriptorOf, DirectSocket } from '@dbproxy/runtime';
import { renumber } from './frame-seq';

export type BackendConnectionState = 'ready' | 'busy' | 'closed';

export const BACKEND_STATES: readonly BackendConnectionState[] = ['ready', 'busy', 'closed'];
export const BACKEND_MOVES: Readonly<Record<BackendConnectionState, readonly BackendConnectionState[]>> = {
  ready: ['busy', 'closed'],
  busy: ['ready', 'closed'],
  closed: [],
};

/** What the packets of a response are for: dropped (setup the edge sent itself) or sent on to the client. */
export const Mode = { Swallow: 0, Forward: 1 } as const;
export type Mode = (typeof Mode)[keyof typeof Mode];

/** Whoever borrowed the connection receives its responses. */
export interface ResponseSink {
  /** Forwarded packets of one backend read, adjacent slices merged. */
  deliver(slices: Buffer[]): void;
  /** The response to the command registered with `tag` ended. */
  responseEnd(tag: number, summary: ResponseSummary): void;
  /** The connection failed with responses outstanding; it is closed. `lastSeq` is the last forwarded sequence id (-1: none). */
  connectionFailed(err: DbproxyError, lastSeq: number): void;
  /**
   * The server asks for the file of a LOAD DATA LOCAL INFILE (its request, sequence `requestSeq`, is
   * forwarded): true when the sink relays the client's file packets (see upload); otherwise the
   * connection answers with the empty packet (no file).
   */
  localInfile?(conn: BackendConnection, requestSeq: number): boolean;
  /**
   * The connection failed while the sink held it with nothing outstanding (a pinned session between
   * statements); `farewell` is the ERR the server sent before closing (wait_timeout, shutdown...), if any.
   */
  idleLost?(err: DbproxyError, farewell: ServerFarewell | null): void;
}

/** An ERR the server sent on its own before closing the connection, with its sequence id. */
export interface ServerFarewell {
  readonly err: ErrPacket;
  readonly sequenceId: number;
}

export interface BackendConnectionOptions {
  readonly backend: string;
  readonly maxResultBytes: number;
  readonly maxStatements: number;
  readonly states: StateTable<BackendConnectionState>;
  /** Where an exception that is not a protocol error (a bug) is logged; the sessions get a fixed message. */
  readonly logger: Logger;
}

const RESET_TAG = -1;
const RESET_PACKET = Buffer.from([1, 0, 0, 0, Command.ResetConnection]);
let nextId = 1;

export class BackendConnection {
  readonly id = nextId++;
  readonly backend: string;
  readonly threadId: number;
  readonly capabilities: number;
  readonly serverVersion: string;
  private readonly openedAt = Date.now();
  /** Character-set state applied on the server (see collationKey). */
  charsetKey = collationKey(BACKEND_COLLATION);
  /** Default schema on the server; null for none. */
  schema: string | null = null;
  /** Session state beyond what the edge tracks may have changed: COM_RESET_CONNECTION before reuse. */
  dirty = false;
  /**
   * A statement other than a plain read ran: LAST_INSERT_ID, ROW_COUNT, warnings and the like belong
   * to its client. The same session may go on using the connection (parked), but it is reset
   * before any other client gets it.
   */
  statementValues = false;
  /** A KILL QUERY was sent for its thread (src/kill): it may land late, so no other client ever gets the connection. */
  interrupted = false;
  /** Causal reads: the connection reports last_gtid in its OK packets, set again after every reset (src/causal). */
  trackedAfterReset: string | null = null;
  readonly statements: BackendStatements;
  private state: BackendConnectionState = 'ready';
  private readonly socket: Socket;
  /** Plain TCP: the descriptor written directly while nothing waits in the stream (DirectSocket, @dbproxy/runtime); -1 for TLS. */
  private readonly fd: number;
  /** The socket for those direct writes (DirectSocket: its stream state read once, not per write). */
  private readonly direct: DirectSocket;
  private readonly framer: PacketFramer;
  private readonly tracker: ResponseTracker;
  /** The socket chunk being framed, and the run of forwarded bytes in it [runStart, runEnd). */
  private chunk: Buffer | null = null;
  private runStart = -1;
  private runEnd = -1;
  /** Forwarded bytes of this chunk, handed to the borrower in one call (reused array). */
  private readonly out: Buffer[] = [];
  /** Whose forwarded bytes `out` holds. */
  private outSink: ResponseSink | null = null;
  /** The sessions using the connection (more than one only while reads are pipelined). */
  private readonly holders: ResponseSink[] = [];
  // Outstanding responses, in order: command byte, mode, caller's tag, who receives it, and the
  // sequence ids: the command's last frame (its response follows it) and the shift to the client's.
  private readonly commands: number[] = [];
  private readonly commandSeqs: number[] = [];
  private readonly seqShifts: number[] = [];
  private readonly modes: Mode[] = [];
  private readonly tags: number[] = [];
  private readonly sinks: ResponseSink[] = [];
  // The outstanding entries are [head, tail) of those arrays; both go back to 0 when it empties (the
  // arrays keep their storage: truncating them, a runtime call each, cost more than the statement).
  private head = 0;
  private tail = 0;
  private begun = false;
  private readonly doneTags: number[] = [];
  private readonly doneSummaries: ResponseSummary[] = [];
  private readonly doneSinks: ResponseSink[] = [];
  /** Responses ended in the chunk being read: [0, doneCount) of the three arrays above. */
  private doneCount = 0;
  private lastSeq = -1;
  /** Client statement id written into a forwarded COM_STMT_PREPARE response (-1: none). */
  rewriteStatementId = -1;
  private failure: DbproxyError | null = null;
  private farewell: ServerFarewell | null = null;
  /** Commands held for one write at the end of this event-loop turn (see queue). */
  private batch: Buffer[] | null = null;
  private readonly onPacket = (packet: MysqlPacket): void => this.handlePacket(packet);

  constructor(
    opened: OpenedBackend,
    private readonly options: BackendConnectionOptions,
  ) {
    this.backend = options.backend;
    this.socket = opened.socket;
    this.framer = opened.framer;
    this.threadId = opened.handshake.connectionId;
    this.serverVersion = opened.handshake.serverVersion;
    this.capabilities = opened.capabilities;
    this.statements = new BackendStatements(options.maxStatements, (id) => this.closeStatementNow(id));
    this.tracker = new ResponseTracker({ capabilities: opened.capabilities, mariaDbCapabilities: opened.mariaDbCapabilities, maxBytes: options.maxResultBytes });
    const onData = (chunk: Buffer): void => this.onData(chunk);
    if (opened.reader) opened.reader.sink = onData;
    else this.socket.on('data', onData);
    this.fd = opened.reader ? descriptorOf(this.socket) : -1;
    this.direct = new DirectSocket(this.socket, this.fd);
    // the errno name (ECONNRESET, EPIPE...), not the exception's text
    this.socket.on('error', (err: NodeJS.ErrnoException) => this.fail(MysqlEdgeErrors.backendLost(this.backend, err.code ?? 'socket error')));
    this.socket.on('close', () => this.fail(MysqlEdgeErrors.backendLost(this.backend, 'connection closed by the server')));
  }

  /** Another client may use it only after COM_RESET_CONNECTION. */
  get needsReset(): boolean {
    return this.dirty || this.statementValues;
  }

  /** False once the socket closed or a protocol error was seen: never lend it again. */
  get alive(): boolean {
    return this.state !== 'closed';
  }

  /** Milliseconds since the connection opened. */
  age(): number {
    return Date.now() - this.openedAt;
  }

  get outstanding(): number {
    return this.tail - this.head;
  }

  /** A session borrows the connection (again: no change); it is busy until the last holder detaches. */
  attach(sink: ResponseSink, reason: string): void {
    if (this.holders.includes(sink)) return;
    this.holders.push(sink);
    if (this.state !== 'ready') return;
    this.options.states.move(this.id, this.state, 'busy', reason);
    this.state = 'busy';
  }

  /** `sink` is done with it (its responses ended or were abandoned). */
  detach(sink: ResponseSink, reason: string): void {
    const holders = this.holders;
    const at = holders.indexOf(sink);
    if (at === holders.length - 1) holders.pop();
    else if (at >= 0) holders.splice(at, 1);
    if (this.state !== 'busy' || this.holders.length > 0) return;
    this.options.states.move(this.id, 'busy', 'ready', reason);
    this.state = 'ready';
  }

  /**
   * Registers the response to one command about to be written, for `sink`; commands without a
   * response are not registered. `lastSeq` is the sequence id of the command's last frame (0 but for
   * commands of 16 MiB - 1 bytes and more) and `clientLastSeq` that of the client's command whose
   * response is forwarded: the forwarded packets are renumbered when the two differ.
   */
  expect(command: number, mode: Mode, tag: number, sink: ResponseSink, lastSeq = 0, clientLastSeq = lastSeq): void {
    const at = this.tail++;
    this.commands[at] = command;
    this.commandSeqs[at] = lastSeq;
    this.seqShifts[at] = (clientLastSeq - lastSeq) & 0xff;
    this.modes[at] = mode;
    this.tags[at] = tag;
    this.sinks[at] = sink;
  }

  /**
   * `sink` gives up its outstanding responses (timeout, client gone) while other sessions' commands
   * share the connection: they are read and dropped so the responses behind them still reach theirs.
   */
  abandon(sink: ResponseSink): void {
    for (let i = this.head; i < this.tail; i++) {
      if (this.sinks[i] !== sink) continue;
      this.sinks[i] = DISCARD;
      this.modes[i] = Mode.Swallow;
    }
    if (this.head < this.tail && this.sinks[this.head] === DISCARD) this.lastSeq = -1;
    this.detach(sink, 'abandoned');
  }

  /** Sequence id of the last packet forwarded to `sink` in the response being read (-1: none). */
  lastSeqOf(sink: ResponseSink): number {
    return this.head < this.tail && this.sinks[this.head] === sink ? this.lastSeq : -1;
  }

  write(bytes: Buffer): void {
    if (this.batch !== null || this.holders.length > 1) return this.queue(bytes);
    this.direct.write(bytes);
  }

  /** Several buffers in one syscall. */
  writev(parts: readonly Buffer[]): void {
    if (this.batch !== null || this.holders.length > 1) {
      for (const part of parts) this.queue(part);
      return;
    }
    if (parts.length === 1) {
      this.direct.write(parts[0] as Buffer);
      return;
    }
    this.socket.cork();
    for (const part of parts) this.socket.write(part);
    this.socket.uncork();
  }

  /**
   * While sessions share the connection (pipelined reads), the commands written during one turn of
   * the event loop go out together after it: one system call, and one read for the server, instead
   * of one per session.
   */
  private queue(bytes: Buffer): void {
    if (this.batch === null) {
      this.batch = [];
      setImmediate(this.flushBatch);
    }
    this.batch.push(bytes);
  }

  private readonly flushBatch = (): void => {
    const batch = this.batch as Buffer[];
    this.batch = null;
    if (this.state === 'closed') return;
    this.direct.write(batch.length === 1 ? (batch[0] as Buffer) : Buffer.concat(batch));
  };

  /** A client reading slower than the backend sends paused it (no session joins a paused connection). */
  paused = false;

  pauseReading(): void {
    this.paused = true;
    this.socket.pause();
  }

  resumeReading(): void {
    this.paused = false;
    this.socket.resume();
  }

  /** More than one session's commands are on it (pipelined reads). */
  get shared(): boolean {
    return this.holders.length > 1;
  }

  /**
   * Before reuse by another client: COM_RESET_CONNECTION when anything untracked may have changed
   * (it rolls back, drops variables, temporary tables and prepared statements, clears
   * LAST_INSERT_ID and warnings, restores the handshake character set and keeps the schema).
   */
  reset(): Promise<void> {
    if (!this.needsReset) return RESOLVED;
    // COM_RESET_CONNECTION restores session_track_system_variables: causal reads track last_gtid again, in the same write
    const again = this.trackedAfterReset;
    return new Promise<void>((resolve, reject) => {
      let pending = again === null ? 1 : 2;
      let failed = false;
      const sink: ResponseSink = {
        deliver: () => undefined,
        responseEnd: (_tag, summary) => {
          if (summary.err && !failed) {
            failed = true;
            reject(MysqlEdgeErrors.backendProtocol(this.backend, `reset: ${summary.err.code} ${summary.err.message}`));
          }
          if (--pending > 0 || failed) return;
          this.detach(sink, 'reset');
          this.statements.clear();
          this.charsetKey = collationKey(BACKEND_COLLATION);
          this.dirty = false;
          this.statementValues = false;
          resolve();
        },
        connectionFailed: (err) => reject(err),
      };
      this.expect(Command.ResetConnection, Mode.Swallow, RESET_TAG, sink);
      this.attach(sink, 'reset');
      if (again === null) return this.write(RESET_PACKET);
      this.expect(Command.Query, Mode.Swallow, RESET_TAG, sink);
      this.writev([RESET_PACKET, queryPacket(again)]);
    });
  }

  close(reason: string): void {
    if (this.state === 'closed') return;
    this.options.states.move(this.id, this.state, 'closed', reason);
    this.state = 'closed';
    this.statements.clear();
    this.socket.destroy();
  }

  /** COM_STMT_CLOSE right away when nobody is using the connection (it has no response). */
  private closeStatementNow(id: number): boolean {
    if (this.state !== 'ready') return this.state === 'closed';
    this.socket.write(statementClose(id));
    return true;
  }

  /**
   * Fails the connection: closed; responses that ended in the chunk being read are delivered, then
   * every session still holding it with responses outstanding is told (the one being read with its
   * last sequence id).
   */
  fail(err: DbproxyError): void {
    if (this.failure) return;
    this.failure = err;
    const waiting: ResponseSink[] = [];
    for (let i = this.head; i < this.tail; i++) {
      const sink = this.sinks[i] as ResponseSink;
      // a session that let go of the connection (timeout, client gone) is past its command
      if (this.holders.includes(sink) && !waiting.includes(sink)) waiting.push(sink);
    }
    const headSink = this.head < this.tail ? this.sinks[this.head] : null;
    this.sinks.fill(DISCARD, 0, this.tail);
    this.head = this.tail = 0;
    this.close(err.code === 'DBP_ERR_MYSQLEDGE_BACKEND_LOST' ? 'lost' : 'failed');
    this.endResponses();
    for (const sink of waiting) {
      if (!this.holders.includes(sink)) continue; // it ended while the responses above were handled
      if (sink === headSink) sink.connectionFailed(err, this.lastSeq);
      else sink.connectionFailed(err.code === 'DBP_ERR_MYSQLEDGE_RESULT_TOO_LARGE' ? MysqlEdgeErrors.backendLost(this.backend, 'another session\'s result on the shared connection was too large') : err, -1);
    }
    // holders between commands (a pinned session) learn it now, not at their next statement
    for (const sink of [...this.holders]) if (!waiting.includes(sink)) sink.idleLost?.(err, this.farewell);
  }

  private onData(chunk: Buffer): void {
    this.chunk = chunk;
    try {
      this.framer.feed(chunk, this.onPacket);
    } catch (err) {
      this.flushOut();
      if (!(err instanceof DbproxyError)) this.fail(reportInternal(err, this.options.logger, { backend: this.backend, thread: this.threadId }));
      else this.fail(err.code.startsWith('DBP_ERR_MYSQLEDGE_') ? err : MysqlEdgeErrors.backendProtocol(this.backend, err.message));
      return;
    }
    this.flushOut();
    if (this.doneCount > 0) this.endResponses();
  }

  /** Tells each session whose response ended in this chunk (after its bytes were handed over). */
  private endResponses(): void {
    const done = this.doneCount;
    const sinks = this.doneSinks;
    for (let i = 0; i < done; i++) {
      const sink = sinks[i] as ResponseSink;
      // no reference to a session kept between reads; DISCARD: delivered already, by a nested call
      // (a session's responseEnd failed the connection, whose fail() delivers the rest)
      sinks[i] = DISCARD;
      if (sink !== DISCARD && this.holders.includes(sink)) sink.responseEnd(this.doneTags[i] as number, this.doneSummaries[i] as ResponseSummary);
    }
    this.doneCount = 0;
  }

  /** Hands the forwarded bytes of this chunk over: the chunk itself when it was all forwarded. */
  private flushOut(): void {
    this.handOver();
    this.chunk = null;
    this.outSink = null; // no reference to a session kept between reads
  }

  /** Delivers the forwarded bytes collected so far to the session they belong to. */
  private handOver(): void {
    this.closeRun();
    const out = this.out;
    if (out.length === 0) return;
    this.outSink?.deliver(out);
    while (out.length > 0) out.pop(); // not `length = 0`: a runtime call that drops the storage too
  }

  /** Forwards a packet: extends the run when it follows the last one in the same chunk (no allocation). */
  private forward(packet: MysqlPacket, sink: ResponseSink): void {
    if (sink !== this.outSink) {
      this.handOver();
      this.outSink = sink;
    }
    // the framer says whether the packet is a slice of the chunk being read (reassembled ones are not)
    const start = this.chunk === null ? -1 : this.framer.wireOffset;
    if (start >= 0) {
      if (start === this.runEnd) {
        this.runEnd += packet.wireLength;
        return;
      }
      this.closeRun();
      this.runStart = start;
      this.runEnd = start + packet.wireLength;
      return;
    }
    this.closeRun();
    this.out.push(packet.wire); // assembled from several chunks
  }

  private closeRun(): void {
    if (this.runStart < 0) return;
    const chunk = this.chunk as Buffer;
    this.out.push(this.runStart === 0 && this.runEnd === chunk.length ? chunk : chunk.subarray(this.runStart, this.runEnd));
    this.runStart = this.runEnd = -1;
  }

  private handlePacket(packet: MysqlPacket): void {
    const head = this.head;
    if (head >= this.tail) throw this.unsolicited(packet);
    const tracker = this.tracker;
    if (!this.begun) {
      tracker.begin(this.commands[head] as number, this.commandSeqs[head] as number);
      this.begun = true;
    }
    const step = tracker.feed(packet);
    if (this.modes[head] === Mode.Forward) {
      if (step.role === 'prepare-ok' && this.rewriteStatementId >= 0) packet.wire.writeUInt32LE(this.rewriteStatementId, 5);
      if (step.role === 'local-infile' && !this.relaysLocalInfile(packet, this.sinks[head] as ResponseSink)) this.refuseLocalInfile(packet);
      else {
        const shift = this.seqShifts[head] as number;
        if (shift !== 0) renumber(packet.wire, shift);
        this.forward(packet, this.sinks[head] as ResponseSink);
        this.lastSeq = (packet.lastSequenceId + shift) & 0xff;
      }
      if (tracker.summary.limitExceeded !== null) throw MysqlEdgeErrors.resultTooLarge(this.options.maxResultBytes);
    } else if (step.role === 'local-infile') this.refuseLocalInfile(packet);
    if (!step.complete) return;
    const done = this.doneCount++;
    this.doneTags[done] = this.tags[head] as number;
    this.doneSummaries[done] = tracker.summary;
    this.doneSinks[done] = this.sinks[head] as ResponseSink;
    this.sinks[head] = DISCARD;
    this.begun = false;
    this.lastSeq = -1;
    this.head = head + 1;
    if (this.head === this.tail) this.head = this.tail = 0;
  }

  /** A packet no command asked for: an ERR is the server's reason for closing (ER_CLIENT_INTERACTION_TIMEOUT, shutdown), kept for the holder. */
  private unsolicited(packet: MysqlPacket): DbproxyError {
    if (packet.payload[0] !== 0xff) return MysqlEdgeErrors.backendProtocol(this.backend, `unsolicited packet of ${packet.payload.length} bytes`);
    const err = decodeErr(packet.payload);
    this.farewell = { err, sequenceId: packet.sequenceId };
    return MysqlEdgeErrors.backendLost(this.backend, `the server closed it: ${err.code} ${err.message}`);
  }

  /** Whether the client gets the server's file request: only on a connection that asked for CLIENT_LOCAL_FILES, for a sink that relays the upload. */
  private relaysLocalInfile(packet: MysqlPacket, sink: ResponseSink): boolean {
    return hasFlag(this.capabilities, Capability.LocalFiles) && sink.localInfile?.(this, packet.lastSequenceId) === true;
  }

  /** No file for this request (setup statements, a sink that does not relay it): the empty packet tells the server so. */
  private refuseLocalInfile(packet: MysqlPacket): void {
    this.socket.write(Buffer.from([0, 0, 0, (packet.lastSequenceId + 1) & 0xff]));
  }

  /** A client's LOAD DATA LOCAL file packet, as it came; false when the socket buffers it (wait for whenDrained). */
  upload(wire: Buffer): boolean {
    return this.direct.write(wire);
  }

  whenDrained(callback: () => void): void {
    this.socket.once('drain', callback);
  }

}

const RESOLVED = Promise.resolve();

/** Receives the responses of abandoned commands: read to their end and dropped. */
const DISCARD: ResponseSink = { deliver: () => undefined, responseEnd: () => undefined, connectionFailed: () => undefined };

function statementClose(id: number): Buffer {
  const buf = Buffer.from([5, 0, 0, 0, Command.StmtClose, 0, 0, 0, 0]);
  buf.writeUInt32LE(id, 5);
  return buf;
}

/** A COM_QUERY packet (sequence 0) for edge-issued statements; they never carry query attributes. */
export function queryPacket(sql: string): Buffer {
  const length = Buffer.byteLength(sql, 'utf8') + 1;
  const buf = Buffer.allocUnsafe(4 + length);
  buf.writeUIntLE(length, 0, 3);
  buf[3] = 0;
  buf[4] = Command.Query;
  buf.write(sql, 5, 'utf8');
  return buf;
}

/** True when the server says a transaction is open or autocommit is off after the response. */
export function holdsTransaction(summary: ResponseSummary): boolean {
  if (summary.err !== null) return false;
  const flags = summary.statusFlags;
  return hasFlag(flags, ServerStatus.InTrans) || !hasFlag(flags, ServerStatus.Autocommit);
}
