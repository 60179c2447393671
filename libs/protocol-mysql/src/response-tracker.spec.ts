import fc from 'fast-check';
import { Capability, MariaDbCapability, ServerStatus } from './capabilities';
import { columnDefinition, encodeColumnDefinition } from './column';
import { ColumnType } from './column-types';
import { Command } from './commands';
import { PacketWriter } from './cursor';
import { framePayload } from './framing';
import { encodeEof, encodeResultSetEnd } from './packets/eof';
import { encodeErr } from './packets/err';
import { encodeOk } from './packets/ok';
import { encodeColumnCount, encodeResultSet, encodeTextRow } from './resultset';
import { ResponseTracker, type ResponsePacketRole, type ResponseSummary, type ResponseTrackerOptions } from './response-tracker';
import { encodeStmtPrepareResponse } from './stmt';
import { chunkings, framePackets, returnsOrThrowsProtocolError, thrownCode } from './testing';

const P41 = Capability.Protocol41 | Capability.Transactions | Capability.MultiResults | Capability.SessionTrack;
const DEPRECATE = P41 | Capability.DeprecateEof;
const cols = [columnDefinition({ name: 'id', type: ColumnType.LongLong }), columnDefinition({ name: 'name', type: ColumnType.VarString })];

interface Run {
  roles: ResponsePacketRole[];
  completeAt: number;
  summary: ResponseSummary;
}

/** Feeds `wire` every way through framer + tracker; checks every way agrees; returns the run. */
function track(command: number, wire: Buffer, options: ResponseTrackerOptions): Run {
  let first: Run | null = null;
  for (const { chunks } of chunkings(wire)) {
    const tracker = new ResponseTracker(options);
    expect(tracker.begin(command)).toBe(true);
    const roles: ResponsePacketRole[] = [];
    let completeAt = -1;
    framePackets(chunks).forEach((p, i) => {
      const step = tracker.feed(p);
      roles.push(step.role);
      if (step.complete) completeAt = i;
    });
    const run = { roles, completeAt, summary: tracker.summary };
    if (first === null) first = run;
    else expect({ ...run, summary: JSON.stringify(run.summary, big) }).toEqual({ ...first, summary: JSON.stringify(first.summary, big) });
  }
  return first as Run;
}

const big = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? String(v) : v);

function resultSet(w: PacketWriter, seq: number, caps: number, statusFlags: number, rows = 3): number {
  return encodeResultSet(w, seq, { columns: cols, rows: Array.from({ length: rows }, (_, i) => [BigInt(i), `row ${i}`]), end: { statusFlags } }, caps);
}

describe('ResponseTracker: COM_QUERY', () => {
  it('an OK completes the response and yields its status', () => {
    const w = new PacketWriter();
    encodeOk(w, 1, { affectedRows: 2, lastInsertId: 10, statusFlags: ServerStatus.Autocommit }, P41);
    const run = track(Command.Query, w.flush(), { capabilities: P41 });
    expect(run.roles).toEqual(['ok']);
    expect(run.completeAt).toBe(0);
    expect(run.summary.ok?.affectedRows).toBe(2n);
    expect(run.summary.statusFlags).toBe(ServerStatus.Autocommit);
  });

  it('an ERR completes the response', () => {
    const w = new PacketWriter();
    encodeErr(w, 1, { code: 1146, sqlState: '42S02', message: "Table 'x' doesn't exist" }, P41);
    const run = track(Command.Query, w.flush(), { capabilities: P41 });
    expect(run.roles).toEqual(['err']);
    expect(run.summary.err).toMatchObject({ code: 1146, sqlState: '42S02' });
  });

  it('a result set with EOF packets: rows counted, not decoded; bytes counted', () => {
    const w = new PacketWriter();
    resultSet(w, 1, P41, ServerStatus.Autocommit | ServerStatus.InTrans);
    const wire = w.flush();
    const run = track(Command.Query, wire, { capabilities: P41 });
    expect(run.roles).toEqual(['column-count', 'column', 'column', 'eof', 'row', 'row', 'row', 'result-end']);
    expect(run.completeAt).toBe(7);
    expect(run.summary).toMatchObject({ rows: 3, bytes: wire.length, resultSets: 1, statusFlags: ServerStatus.Autocommit | ServerStatus.InTrans, columns: [] });
  });

  it('a result set under CLIENT_DEPRECATE_EOF ends with an OK carrying session state', () => {
    const w = new PacketWriter();
    let seq = encodeColumnCount(w, 1, 2);
    for (const c of cols) seq = encodeColumnDefinition(w, seq, c);
    seq = encodeTextRow(w, seq, [1n, 'a']);
    encodeResultSetEnd(w, seq, { statusFlags: ServerStatus.Autocommit, sessionState: [{ type: 'schema', schema: 'other' }] }, DEPRECATE);
    const run = track(Command.Query, w.flush(), { capabilities: DEPRECATE, collectColumns: true });
    expect(run.roles).toEqual(['column-count', 'column', 'column', 'row', 'result-end']);
    expect(run.summary.sessionState).toEqual([{ type: 'schema', schema: 'other' }]);
    expect(run.summary.columns.map((c) => c.name)).toEqual(['id', 'name']);
  });

  it('multi-results (CALL, multi-statements) continue while MORE_RESULTS_EXISTS is set', () => {
    for (const caps of [P41, DEPRECATE]) {
      const w = new PacketWriter();
      let seq = encodeOk(w, 1, { affectedRows: 1, statusFlags: ServerStatus.MoreResultsExists }, caps);
      seq = resultSet(w, seq, caps, ServerStatus.MoreResultsExists, 2);
      seq = resultSet(w, seq, caps, ServerStatus.MoreResultsExists | ServerStatus.PsOutParams, 1);
      encodeOk(w, seq, { statusFlags: ServerStatus.Autocommit }, caps);
      const run = track(Command.Query, w.flush(), { capabilities: caps });
      expect(run.completeAt).toBe(run.roles.length - 1);
      expect(run.roles.filter((r) => r === 'column-count')).toHaveLength(2);
      expect(run.summary).toMatchObject({ rows: 3, resultSets: 2, statusFlags: ServerStatus.Autocommit });
    }
  });

  it('an ERR in the middle of the rows ends the response', () => {
    const w = new PacketWriter();
    let seq = encodeColumnCount(w, 1, 2);
    for (const c of cols) seq = encodeColumnDefinition(w, seq, c);
    seq = encodeEof(w, seq, {}, P41);
    seq = encodeTextRow(w, seq, [1n, 'a']);
    encodeErr(w, seq, { code: 1317, sqlState: '70100', message: 'Query execution was interrupted' }, P41);
    const run = track(Command.Query, w.flush(), { capabilities: P41 });
    expect(run.roles.slice(-2)).toEqual(['row', 'err']);
    expect(run.summary.err?.code).toBe(1317);
  });

  it('reports LOCAL INFILE so the proxy can refuse, then waits for the final OK/ERR', () => {
    const tracker = new ResponseTracker({ capabilities: P41 });
    tracker.begin(Command.Query);
    const [infile] = framePackets([framePayload(Buffer.concat([Buffer.of(0xfb), Buffer.from('/etc/passwd')]), 1)]);
    expect(tracker.feed(infile)).toEqual({ role: 'local-infile', complete: false });
    expect(tracker.summary.localInfile).toBe('/etc/passwd');
    // The proxy answered with an empty packet (sequence 2); the server's ERR comes as 3.
    const w = new PacketWriter();
    encodeErr(w, 3, { code: 1148, sqlState: '42000', message: 'The used command is not allowed' }, P41);
    const [err] = framePackets([w.flush()]);
    expect(tracker.feed(err)).toEqual({ role: 'err', complete: true });
  });

  it('skips to rows when MariaDB metadata caching leaves the column definitions out', () => {
    const maria = { capabilities: P41, mariaDbCapabilities: MariaDbCapability.CacheMetadata };
    const w = new PacketWriter();
    w.begin(1).u8(2).u8(0);
    let seq = w.end();
    seq = encodeTextRow(w, seq, [1n, 'a']);
    encodeEof(w, seq, {}, P41);
    expect(track(Command.StmtExecute, w.flush(), maria).roles).toEqual(['column-count', 'row', 'result-end']);
  });

  it('raises the row and byte limits once crossed', () => {
    const w = new PacketWriter();
    resultSet(w, 1, P41, 0, 5);
    const wire = w.flush();
    expect(track(Command.Query, wire, { capabilities: P41, maxRows: 4 }).summary.limitExceeded).toBe('rows');
    expect(track(Command.Query, wire, { capabilities: P41, maxRows: 5 }).summary.limitExceeded).toBeNull();
    expect(track(Command.Query, wire, { capabilities: P41, maxBytes: 40 }).summary.limitExceeded).toBe('bytes');
  });

  it('treats MariaDB progress reports as interim packets when progress was negotiated', () => {
    const w = new PacketWriter();
    w.begin(1).u8(0xff).u16(0xffff).u8(1).u8(1).u8(2).u24(5000).lenencString('stage');
    const seq = w.end();
    encodeOk(w, seq, {}, P41);
    const run = track(Command.Query, w.flush(), { capabilities: P41, mariaDbCapabilities: MariaDbCapability.Progress });
    expect(run.roles).toEqual(['progress', 'ok']);
  });
});

describe('ResponseTracker: prepared statements and other commands', () => {
  const param = columnDefinition({ name: '?', type: ColumnType.VarString });

  it.each([
    ['with EOF packets', P41, ['prepare-ok', 'param', 'param', 'eof', 'column', 'column', 'eof']],
    ['with CLIENT_DEPRECATE_EOF', DEPRECATE, ['prepare-ok', 'param', 'param', 'column', 'column']],
  ])('COM_STMT_PREPARE %s', (_name, caps, roles) => {
    const w = new PacketWriter();
    encodeStmtPrepareResponse(w, 1, { statementId: 4, params: [param, param], columns: cols, warnings: 0 }, caps);
    const run = track(Command.StmtPrepare, w.flush(), { capabilities: caps });
    expect(run.roles).toEqual(roles);
    expect(run.completeAt).toBe(roles.length - 1);
    expect(run.summary.prepared).toMatchObject({ statementId: 4, paramCount: 2, columnCount: 2 });
    expect(run.summary.params.map((c) => c.name)).toEqual(['?', '?']);
    expect(run.summary.columns.map((c) => c.name)).toEqual(['id', 'name']);
  });

  it('COM_STMT_PREPARE without params or columns, or with params only', () => {
    const w = new PacketWriter();
    encodeStmtPrepareResponse(w, 1, { statementId: 1, params: [], columns: [] }, P41);
    expect(track(Command.StmtPrepare, w.flush(), { capabilities: P41 }).roles).toEqual(['prepare-ok']);
    encodeStmtPrepareResponse(w, 1, { statementId: 1, params: [param], columns: [] }, P41);
    expect(track(Command.StmtPrepare, w.flush(), { capabilities: P41 }).roles).toEqual(['prepare-ok', 'param', 'eof']);
    encodeStmtPrepareResponse(w, 1, { statementId: 1, params: [], columns: [cols[0]] }, DEPRECATE);
    expect(track(Command.StmtPrepare, w.flush(), { capabilities: DEPRECATE }).roles).toEqual(['prepare-ok', 'column']);
  });

  it('COM_STMT_EXECUTE with a cursor completes after the metadata; COM_STMT_FETCH then reads rows', () => {
    const w = new PacketWriter();
    let seq = encodeColumnCount(w, 1, 1);
    seq = encodeColumnDefinition(w, seq, cols[0]);
    encodeEof(w, seq, { statusFlags: ServerStatus.CursorExists | ServerStatus.Autocommit }, P41);
    expect(track(Command.StmtExecute, w.flush(), { capabilities: P41 }).roles).toEqual(['column-count', 'column', 'eof']);
    w.begin(1).u8(0).u8(0).i64(7n);
    encodeEof(w, w.end(), { statusFlags: ServerStatus.LastRowSent }, P41);
    const fetch = track(Command.StmtFetch, w.flush(), { capabilities: P41 });
    expect(fetch.roles).toEqual(['row', 'result-end']);
    expect(fetch.summary.statusFlags).toBe(ServerStatus.LastRowSent);
  });

  it('COM_FIELD_LIST reads definitions until EOF', () => {
    const w = new PacketWriter();
    let seq = encodeColumnDefinition(w, 1, { ...cols[0], defaultValue: Buffer.from('0') });
    seq = encodeColumnDefinition(w, seq, cols[1]);
    encodeEof(w, seq, {}, P41);
    const run = track(Command.FieldList, w.flush(), { capabilities: P41 });
    expect(run.roles).toEqual(['column', 'column', 'result-end']);
    expect(run.summary.columns[0].defaultValue).toEqual(Buffer.from('0'));
  });

  it('COM_STATISTICS is one string packet; COM_PING an OK; COM_SET_OPTION an EOF', () => {
    expect(track(Command.Statistics, framePayload(Buffer.from('Uptime: 5  Threads: 1'), 1), { capabilities: P41 }).roles).toEqual(['statistics']);
    const w = new PacketWriter();
    encodeOk(w, 1, {}, P41);
    expect(track(Command.Ping, w.flush(), { capabilities: P41 }).roles).toEqual(['ok']);
    encodeEof(w, 1, {}, P41);
    expect(track(Command.SetOption, w.flush(), { capabilities: P41 }).roles).toEqual(['eof']);
  });

  it('commands without a response complete at once, and a stray packet is a typed error', () => {
    const tracker = new ResponseTracker({ capabilities: P41 });
    for (const c of [Command.StmtClose, Command.StmtSendLongData, Command.Quit]) {
      expect(tracker.begin(c)).toBe(false);
      expect(tracker.complete).toBe(true);
    }
    const [ok] = framePackets([framePayload(Buffer.from('00000002000000', 'hex'), 1)]);
    expect(thrownCode(() => tracker.feed(ok))).toBe('DBP_ERR_MYSQL_UNEXPECTED_PACKET');
  });

  it('refuses to start over an outstanding response or on untrackable commands', () => {
    const tracker = new ResponseTracker({ capabilities: P41 });
    tracker.begin(Command.Query);
    expect(thrownCode(() => tracker.begin(Command.Ping))).toBe('DBP_ERR_MYSQL_INVALID_STATE');
    expect(thrownCode(() => new ResponseTracker({ capabilities: P41 }).begin(Command.ChangeUser))).toBe('DBP_ERR_MYSQL_INVALID_STATE');
  });

  it('checks sequence ids follow on from the command', () => {
    const tracker = new ResponseTracker({ capabilities: P41 });
    tracker.begin(Command.Ping);
    const [ok] = framePackets([framePayload(Buffer.from('00000002000000', 'hex'), 2)]);
    expect(thrownCode(() => tracker.feed(ok))).toBe('DBP_ERR_MYSQL_SEQUENCE_MISMATCH');
    const lax = new ResponseTracker({ capabilities: P41, checkSequence: false });
    lax.begin(Command.Ping);
    expect(lax.feed(ok).complete).toBe(true);
  });

  it('expects the response to a command of several frames after its last frame', () => {
    const tracker = new ResponseTracker({ capabilities: P41 });
    tracker.begin(Command.Query, 1); // frames 0 and 1: the OK comes as 2
    const [ok] = framePackets([framePayload(Buffer.from('00000002000000', 'hex'), 2)]);
    expect(tracker.feed(ok).complete).toBe(true);
    tracker.begin(Command.Query, 1);
    const [early] = framePackets([framePayload(Buffer.from('00000002000000', 'hex'), 1)]);
    expect(thrownCode(() => tracker.feed(early))).toBe('DBP_ERR_MYSQL_SEQUENCE_MISMATCH');
  });
});

describe('ResponseTracker on malformed responses (property)', () => {
  it('returns or throws typed protocol errors, one step per packet, for random packets after any command', () => {
    const commands = [Command.Query, Command.StmtExecute, Command.StmtPrepare, Command.FieldList, Command.Ping, Command.StmtFetch, Command.Statistics];
    fc.assert(
      fc.property(fc.constantFrom(...commands), fc.boolean(), fc.array(fc.uint8Array({ maxLength: 24 }), { maxLength: 12 }), (command, deprecate, payloads) => {
        const tracker = new ResponseTracker({ capabilities: deprecate ? DEPRECATE : P41, collectColumns: true, checkSequence: false });
        tracker.begin(command);
        for (const payload of payloads) {
          const [packet] = framePackets([framePayload(payload, 1)]);
          if (returnsOrThrowsProtocolError(() => tracker.feed(packet)) !== 'ok') break;
        }
      }),
    );
  });
});
