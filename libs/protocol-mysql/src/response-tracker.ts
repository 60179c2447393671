// Client-side state machine over a backend's response to one command: says when the response is
// complete, classifies each packet without decoding rows, counts rows and bytes, and keeps the
// final status flags and session-state changes. This is what lets a proxy forward slices and
// know when a pooled connection is free again.
import { Capability, hasFlag, MariaDbCapability, ServerStatus } from './capabilities';
import { decodeColumnDefinition, type ColumnDefinition } from './column';
import { Command, type CommandCode } from './commands';
import { InvalidState, SequenceMismatch, UnexpectedPacket } from './errors';
import type { MysqlPacket } from './framing';
import { decodeEof } from './packets/eof';
import { decodeErr, isProgressReport, type ErrPacket } from './packets/err';
import { endsResultSet, isResultSetTerminator, PacketHeader } from './packets/headers';
import { decodeOk, type OkPacket } from './packets/ok';
import type { SessionStateChange } from './packets/session-state';
import { decodeColumnCount } from './resultset';
import { decodeStmtPrepareOk, type StmtPrepareOk } from './stmt';

export type ResponsePacketRole =
  | 'ok'
  | 'err'
  | 'progress'
  | 'local-infile'
  | 'column-count'
  | 'column'
  | 'eof'
  | 'row'
  | 'result-end'
  | 'prepare-ok'
  | 'param'
  | 'statistics';

export interface TrackerStep {
  readonly role: ResponsePacketRole;
  /** True on the last packet of the response. */
  readonly complete: boolean;
}

export interface ResponseTrackerOptions {
  readonly capabilities: number;
  readonly mariaDbCapabilities?: number;
  /** Rows after which `limitExceeded` becomes 'rows'. */
  readonly maxRows?: number;
  /** Response bytes (headers included) after which `limitExceeded` becomes 'bytes'. */
  readonly maxBytes?: number;
  /** Decode and keep result-set column definitions (prepare responses always keep theirs). */
  readonly collectColumns?: boolean;
  /** Check that sequence ids follow on from the command's 0 (default true). */
  readonly checkSequence?: boolean;
}

export interface ResponseSummary {
  rows: number;
  bytes: number;
  resultSets: number;
  /** Status flags of the last OK/EOF seen. */
  statusFlags: number;
  warnings: number;
  /** The last OK packet (statement results, the OK ending a result set under CLIENT_DEPRECATE_EOF). */
  ok: OkPacket | null;
  err: ErrPacket | null;
  /** Session-state changes from every OK of the response, in order. */
  sessionState: SessionStateChange[];
  /** File name of a LOCAL INFILE request: answer with an empty packet to refuse it. */
  localInfile: string | null;
  prepared: StmtPrepareOk | null;
  params: ColumnDefinition[];
  columns: ColumnDefinition[];
  limitExceeded: 'rows' | 'bytes' | null;
}

type State =
  | 'idle'
  | 'first'
  | 'columns'
  | 'columns-eof'
  | 'rows'
  | 'infile'
  | 'prepare-ok'
  | 'prepare-params'
  | 'prepare-params-eof'
  | 'prepare-columns'
  | 'prepare-columns-eof'
  | 'field-list'
  | 'statistics'
  | 'simple'
  | 'done';

type Step = [ResponsePacketRole, State];

const ROW_STEP: TrackerStep = Object.freeze({ role: 'row', complete: false });

const NO_RESPONSE = new Set<number>([Command.Quit, Command.StmtClose, Command.StmtSendLongData]);
const UNTRACKABLE = new Set<number>([Command.ChangeUser, Command.BinlogDump, Command.BinlogDumpGtid, Command.TableDump, Command.RegisterSlave, Command.Clone, Command.Connect, Command.ConnectOut, Command.Daemon, Command.SubscribeGroupReplicationStream, Command.StmtBulkExecute, Command.Multi]);

function emptySummary(): ResponseSummary {
  return { rows: 0, bytes: 0, resultSets: 0, statusFlags: 0, warnings: 0, ok: null, err: null, sessionState: [], localInfile: null, prepared: null, params: [], columns: [], limitExceeded: null };
}

/** One per backend connection; `begin` for each command sent, then `feed` every packet that comes back. */
export class ResponseTracker {
  private state: State = 'idle';
  private remaining = 0; // column definitions left in the current block
  private expectedSequence = 1;
  private resync = false;
  private readonly deprecateEof: boolean;
  private readonly metadataFlag: boolean;
  private readonly progress: boolean;
  summary: ResponseSummary = emptySummary();

  constructor(private readonly options: ResponseTrackerOptions) {
    const caps = options.capabilities;
    const maria = options.mariaDbCapabilities ?? 0;
    this.deprecateEof = hasFlag(caps, Capability.DeprecateEof);
    this.metadataFlag = hasFlag(maria, MariaDbCapability.CacheMetadata) || hasFlag(caps, Capability.OptionalResultsetMetadata);
    this.progress = hasFlag(maria, MariaDbCapability.Progress);
  }

  /** True when no response is outstanding. */
  get complete(): boolean {
    return this.state === 'done' || this.state === 'idle';
  }

  get currentState(): string {
    return this.state;
  }

  /**
   * Starts tracking the response to `command`, sent with sequence id 0 in frames up to
   * `commandLastSequence` (a command of 16 MiB - 1 bytes and more takes several frames; its
   * response starts after the last). Returns false when none comes.
   */
  begin(command: CommandCode | number, commandLastSequence = 0): boolean {
    if (!this.complete) throw InvalidState(`begin() while the previous response is in state ${this.state}`);
    if (UNTRACKABLE.has(command)) throw InvalidState(`the response to command ${command} cannot be tracked`);
    this.summary = emptySummary();
    this.expectedSequence = (commandLastSequence + 1) & 0xff;
    this.resync = false;
    this.state = this.initialState(command);
    return this.state !== 'done';
  }

  private initialState(command: number): State {
    if (NO_RESPONSE.has(command)) return 'done';
    switch (command) {
      case Command.Query:
      case Command.StmtExecute:
      case Command.ProcessInfo:
        return 'first';
      case Command.StmtFetch:
        return 'rows';
      case Command.StmtPrepare:
        return 'prepare-ok';
      case Command.FieldList:
        return 'field-list';
      case Command.Statistics:
        return 'statistics';
      default:
        return 'simple';
    }
  }

  /** Classifies one response packet and advances. Throws a typed error for a packet that cannot come now. */
  feed(packet: MysqlPacket): TrackerStep {
    if (this.complete) throw UnexpectedPacket(describe(packet.payload), 'no response is outstanding');
    this.checkSequence(packet);
    // Fast path, one header check per row: no decoding, no allocation (not even the payload's view).
    const header = packet.header;
    if (this.state === 'rows' && header !== -1 && header !== PacketHeader.Err && !endsResultSet(header, packet.payloadLength, this.deprecateEof)) {
      this.count(packet.wireLength, 1);
      return ROW_STEP;
    }
    this.count(packet.wireLength, 0);
    const [role, next] = this.step(packet.payload);
    this.state = next;
    return { role, complete: next === 'done' };
  }

  private checkSequence(packet: MysqlPacket): void {
    if (this.options.checkSequence !== false && !this.resync && packet.sequenceId !== this.expectedSequence) {
      throw SequenceMismatch(packet.sequenceId, this.expectedSequence);
    }
    this.resync = false;
    this.expectedSequence = (packet.lastSequenceId + 1) & 0xff;
  }

  private count(bytes: number, rows: number): void {
    const s = this.summary;
    s.bytes += bytes;
    s.rows += rows;
    if (s.limitExceeded) return;
    if (this.options.maxRows !== undefined && s.rows > this.options.maxRows) s.limitExceeded = 'rows';
    else if (this.options.maxBytes !== undefined && s.bytes > this.options.maxBytes) s.limitExceeded = 'bytes';
  }

  private step(p: Buffer): Step {
    switch (this.state) {
      case 'first':
        return this.onFirst(p);
      case 'columns':
        return this.onColumn(p);
      case 'columns-eof':
        return this.onColumnsEof(p);
      case 'rows':
        return this.onRow(p);
      case 'infile':
      case 'simple':
        return this.onStatement(p);
      case 'prepare-ok':
        return this.onPrepareOk(p);
      case 'prepare-params':
        return this.onPrepareDefinition(p, this.summary.params, 'param');
      case 'prepare-columns':
        return this.onPrepareDefinition(p, this.summary.columns, 'column');
      case 'prepare-params-eof':
      case 'prepare-columns-eof':
        return this.onPrepareEof(p);
      case 'field-list':
        return this.onFieldList(p);
      case 'statistics':
        return p[0] === PacketHeader.Err ? this.onErr(p) : ['statistics', 'done'];
      default:
        throw UnexpectedPacket(describe(p), `in state ${this.state}`);
    }
  }

  private onErr(p: Buffer): Step {
    if (this.progress && isProgressReport(p)) return ['progress', this.state];
    this.summary.err = decodeErr(p);
    return ['err', 'done'];
  }

  private onOk(p: Buffer, role: ResponsePacketRole): Step {
    const ok = decodeOk(p, this.options.capabilities);
    const s = this.summary;
    s.ok = ok;
    s.statusFlags = ok.statusFlags;
    s.warnings = ok.warnings;
    s.sessionState.push(...ok.sessionState);
    return [role, hasFlag(ok.statusFlags, ServerStatus.MoreResultsExists) ? 'first' : 'done'];
  }

  private onFirst(p: Buffer): Step {
    switch (p[0]) {
      case PacketHeader.Ok:
        return this.onOk(p, 'ok');
      case PacketHeader.Err:
        return this.onErr(p);
      case PacketHeader.LocalInfile:
        this.summary.localInfile = p.subarray(1).toString('utf8');
        this.resync = true; // the client's file packets come in between
        return ['local-infile', 'infile'];
      default: {
        const { columnCount, metadataFollows } = decodeColumnCount(p, this.metadataFlag);
        this.summary.resultSets++;
        this.summary.columns = [];
        this.remaining = columnCount;
        if (metadataFollows) return ['column-count', 'columns'];
        return ['column-count', 'rows'];
      }
    }
  }

  private onColumn(p: Buffer): Step {
    if (p[0] === PacketHeader.Err) return this.onErr(p);
    if (this.options.collectColumns) this.summary.columns.push(decodeColumnDefinition(p, this.columnOptions()));
    else if (p.length === 0) throw UnexpectedPacket('empty packet', 'reading column definitions');
    this.remaining--;
    if (this.remaining > 0) return ['column', 'columns'];
    return ['column', this.deprecateEof ? 'rows' : 'columns-eof'];
  }

  private columnOptions(): { mariaDbExtendedMetadata: boolean } {
    return { mariaDbExtendedMetadata: hasFlag(this.options.mariaDbCapabilities ?? 0, MariaDbCapability.ExtendedMetadata) };
  }

  private onColumnsEof(p: Buffer): Step {
    if (p[0] === PacketHeader.Err) return this.onErr(p);
    const eof = decodeEof(p);
    this.summary.statusFlags = eof.statusFlags;
    // A cursor was opened (COM_STMT_EXECUTE with a cursor flag): rows come through COM_STMT_FETCH.
    return ['eof', hasFlag(eof.statusFlags, ServerStatus.CursorExists) ? 'done' : 'rows'];
  }

  // Reached only for what ends a row stream (ERR, EOF, OK terminator) or an empty packet; rows take the fast path in feed().
  private onRow(p: Buffer): Step {
    if (p.length > 0 && p[0] === PacketHeader.Err) return this.onErr(p);
    if (p.length === 0) throw UnexpectedPacket('empty packet', 'reading rows');
    if (this.deprecateEof) return this.onOk(p, 'result-end');
    const eof = decodeEof(p);
    this.summary.statusFlags = eof.statusFlags;
    this.summary.warnings = eof.warnings;
    return ['result-end', hasFlag(eof.statusFlags, ServerStatus.MoreResultsExists) ? 'first' : 'done'];
  }

  private onStatement(p: Buffer): Step {
    if (p[0] === PacketHeader.Err) return this.onErr(p);
    if (p[0] === PacketHeader.Ok) return this.onOk(p, 'ok');
    // COM_SET_OPTION and COM_DEBUG answer with an EOF (an OK with 0xFE under CLIENT_DEPRECATE_EOF).
    if (isResultSetTerminator(p, this.deprecateEof)) return this.deprecateEof ? this.onOk(p, 'ok') : [this.eofStatus(p), 'done'];
    throw UnexpectedPacket(describe(p), 'expecting OK or ERR');
  }

  private eofStatus(p: Buffer): ResponsePacketRole {
    const eof = decodeEof(p);
    this.summary.statusFlags = eof.statusFlags;
    this.summary.warnings = eof.warnings;
    return 'eof';
  }

  private onPrepareOk(p: Buffer): Step {
    if (p[0] === PacketHeader.Err) return this.onErr(p);
    const prepared = decodeStmtPrepareOk(p);
    this.summary.prepared = prepared;
    this.summary.warnings = prepared.warnings;
    if (!prepared.metadataFollows) return ['prepare-ok', 'done'];
    return ['prepare-ok', this.prepareStateAfter('ok')];
  }

  // The prepare response is OK, P param definitions (+EOF), C column definitions (+EOF).
  private prepareStateAfter(part: 'ok' | 'params' | 'params-eof' | 'columns'): State {
    const prepared = this.summary.prepared as StmtPrepareOk;
    switch (part) {
      case 'ok':
        this.remaining = prepared.paramCount;
        return prepared.paramCount > 0 ? 'prepare-params' : this.prepareStateAfter('params-eof');
      case 'params':
        return this.deprecateEof ? this.prepareStateAfter('params-eof') : 'prepare-params-eof';
      case 'params-eof':
        this.remaining = prepared.columnCount;
        return prepared.columnCount > 0 ? 'prepare-columns' : 'done';
      case 'columns':
        return this.deprecateEof ? 'done' : 'prepare-columns-eof';
    }
  }

  private onPrepareDefinition(p: Buffer, into: ColumnDefinition[], role: 'param' | 'column'): Step {
    if (p[0] === PacketHeader.Err) return this.onErr(p);
    into.push(decodeColumnDefinition(p, this.columnOptions()));
    this.remaining--;
    if (this.remaining > 0) return [role, this.state];
    return [role, this.prepareStateAfter(role === 'param' ? 'params' : 'columns')];
  }

  private onPrepareEof(p: Buffer): Step {
    decodeEof(p);
    return ['eof', this.state === 'prepare-params-eof' ? this.prepareStateAfter('params-eof') : 'done'];
  }

  private onFieldList(p: Buffer): Step {
    if (p[0] === PacketHeader.Err) return this.onErr(p);
    if (isResultSetTerminator(p, this.deprecateEof)) return this.deprecateEof ? this.onOk(p, 'result-end') : (this.eofStatus(p), ['result-end', 'done']);
    this.summary.columns.push(decodeColumnDefinition(p, this.columnOptions()));
    return ['column', 'field-list'];
  }
}

function describe(p: Buffer): string {
  return p.length === 0 ? 'empty packet' : `header 0x${p[0].toString(16).padStart(2, '0')}, ${p.length} bytes`;
}
