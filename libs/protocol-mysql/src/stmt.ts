// Prepared statements: the COM_STMT_PREPARE response and COM_STMT_EXECUTE with binary parameters.
import { Capability, hasFlag } from './capabilities';
import { encodeColumnDefinition, type ColumnDecodeOptions, type ColumnDefinition } from './column';
import type { MysqlValue } from './column-types';
import { PacketReader, type PacketWriter } from './cursor';
import { MalformedPacket, UnsupportedFeature } from './errors';
import { encodeEof } from './packets/eof';
import { PacketHeader } from './packets/headers';
import {
  readParameterBlock,
  toTypedParameter,
  writeParameterBlock,
  type ParameterBlockOptions,
  type ParameterType,
  type QueryAttribute,
  type TypedParameter,
} from './parameters';

/** COM_STMT_EXECUTE flags byte. */
export const CursorType = {
  NoCursor: 0x00, // CURSOR_TYPE_NO_CURSOR
  ReadOnly: 0x01, // CURSOR_TYPE_READ_ONLY
  ForUpdate: 0x02, // CURSOR_TYPE_FOR_UPDATE
  Scrollable: 0x04, // CURSOR_TYPE_SCROLLABLE
  ParameterCountAvailable: 0x08, // PARAMETER_COUNT_AVAILABLE (MySQL 8.0.26+, with query attributes)
} as const;

const STMT_EXECUTE = 0x17; // COM_STMT_EXECUTE

export interface StmtPrepareOk {
  readonly kind: 'stmt-prepare-ok';
  readonly statementId: number;
  readonly columnCount: number;
  readonly paramCount: number;
  readonly warnings: number;
  /** False when MariaDB metadata caching / MySQL optional metadata left the definitions out. */
  readonly metadataFollows: boolean;
}

export function decodeStmtPrepareOk(payload: Buffer): StmtPrepareOk {
  const r = new PacketReader(payload);
  if (r.u8('prepare OK header') !== PacketHeader.Ok) throw MalformedPacket('COM_STMT_PREPARE response is not 0x00');
  const statementId = r.u32('statement id');
  const columnCount = r.u16('column count');
  const paramCount = r.u16('parameter count');
  r.skip(1);
  const warnings = r.atEnd() ? 0 : r.u16('warnings');
  const metadataFollows = r.atEnd() ? true : r.u8('metadata follows') !== 0;
  return { kind: 'stmt-prepare-ok', statementId, columnCount, paramCount, warnings, metadataFollows };
}

export interface StmtPrepareResponseFields {
  readonly statementId: number;
  readonly params: readonly ColumnDefinition[];
  readonly columns: readonly ColumnDefinition[];
  readonly warnings?: number;
}

/** Writes the whole COM_STMT_PREPARE response (OK, param definitions, column definitions). Returns the next sequence id. */
export function encodeStmtPrepareResponse(
  w: PacketWriter,
  sequenceId: number,
  res: StmtPrepareResponseFields,
  capabilities: number,
  options: ColumnDecodeOptions = {},
): number {
  w.begin(sequenceId).u8(PacketHeader.Ok).u32(res.statementId).u16(res.columns.length).u16(res.params.length).u8(0).u16(res.warnings ?? 0);
  let seq = w.end();
  const eof = !hasFlag(capabilities, Capability.DeprecateEof);
  for (const group of [res.params, res.columns]) {
    for (const col of group) seq = encodeColumnDefinition(w, seq, col, options);
    if (group.length > 0 && eof) seq = encodeEof(w, seq, {}, capabilities);
  }
  return seq;
}

export interface StmtExecuteHeader {
  readonly statementId: number;
  readonly flags: number;
  readonly iterationCount: number;
}

export interface StmtExecute extends StmtExecuteHeader {
  readonly kind: 'stmt-execute';
  readonly newParamsBound: boolean;
  /** Types in force for the positional parameters (sent now, or carried from `previousTypes`). */
  readonly parameterTypes: readonly ParameterType[];
  readonly params: readonly MysqlValue[];
  /** Positions whose value came through COM_STMT_SEND_LONG_DATA (null in `params`). */
  readonly longDataParams: readonly number[];
  /** Named query attributes after the positional parameters (CLIENT_QUERY_ATTRIBUTES). */
  readonly attributes: readonly QueryAttribute[];
}

/** Reads statement id, flags and iteration count; refuses MariaDB parameter arrays. */
export function readStmtExecuteHeader(r: PacketReader): StmtExecuteHeader {
  const statementId = r.u32('statement id');
  const flags = r.u8('execute flags');
  const iterationCount = r.u32('iteration count');
  if (iterationCount > 1) throw UnsupportedFeature(`parameter arrays (iteration count ${iterationCount})`);
  return { statementId, flags, iterationCount };
}

export interface StmtExecuteDecodeOptions extends Omit<ParameterBlockOptions, 'withNames'> {
  /** Parameters the statement was prepared with (from its prepare response). */
  readonly paramCount: number;
  readonly capabilities: number;
}

/**
 * Decodes a COM_STMT_EXECUTE payload (command byte included) into typed parameter values; with
 * `valueCount`, only the first that many values (`params` is that long, no attributes).
 */
export function decodeStmtExecute(payload: Buffer, options: StmtExecuteDecodeOptions): StmtExecute {
  const r = new PacketReader(payload);
  if (r.u8('command') !== STMT_EXECUTE) throw MalformedPacket('not a COM_STMT_EXECUTE');
  const { statementId, flags, iterationCount } = readStmtExecuteHeader(r);
  const withNames = hasFlag(options.capabilities, Capability.QueryAttributes);
  let count = options.paramCount;
  if (withNames && (flags & CursorType.ParameterCountAvailable) !== 0) count = r.lenenc('parameter count');
  if (count < options.paramCount) throw MalformedPacket(`${count} parameters sent, statement has ${options.paramCount}`);
  if (count === 0) return { kind: 'stmt-execute', statementId, flags, iterationCount, newParamsBound: false, parameterTypes: [], params: [], longDataParams: [], attributes: [] };
  // no object spreads on this per-execute path (a proxy decodes every execute): they cost more than the decoding
  const block = readParameterBlock(r, count, {
    withNames,
    previousTypes: options.previousTypes,
    longDataParams: options.longDataParams,
    encoding: options.encoding,
    valueCount: options.valueCount,
  });
  const values = block.values;
  const n = Math.min(options.paramCount, values.length);
  const attributes: QueryAttribute[] = [];
  for (let i = n; i < values.length; i++) {
    const type = block.types[i] as ParameterType;
    attributes.push({ name: block.names[i] as string, type: type.type, unsigned: type.unsigned, value: values[i] as MysqlValue });
  }
  return {
    kind: 'stmt-execute',
    statementId,
    flags,
    iterationCount,
    newParamsBound: block.newParamsBound,
    parameterTypes: count === options.paramCount ? block.types : block.types.slice(0, options.paramCount),
    params: n === values.length ? values : values.slice(0, n),
    longDataParams: block.longData,
    attributes,
  };
}

export interface StmtExecuteFields {
  readonly statementId: number;
  readonly flags?: number;
  /** Bare values get an inferred type; pass `{type, unsigned, value}` to choose it. */
  readonly params: readonly (MysqlValue | TypedParameter)[];
  /** False to reuse the types bound by the previous execute. */
  readonly sendTypes?: boolean;
  readonly attributes?: readonly QueryAttribute[];
}

/** Writes a COM_STMT_EXECUTE (sequence id 0). Returns the next sequence id. */
export function encodeStmtExecute(w: PacketWriter, exec: StmtExecuteFields, capabilities: number): number {
  const withNames = hasFlag(capabilities, Capability.QueryAttributes);
  const attributes = withNames ? (exec.attributes ?? []) : [];
  const params = [...exec.params.map(toTypedParameter), ...attributes];
  let flags = exec.flags ?? CursorType.NoCursor;
  if (withNames) flags |= CursorType.ParameterCountAvailable;
  const names = withNames ? params.map((_, i) => (i < exec.params.length ? '' : attributes[i - exec.params.length].name)) : null;
  return w.framed(0, () => {
    w.u8(STMT_EXECUTE).u32(exec.statementId).u8(flags).u32(1);
    if (withNames) w.lenenc(params.length);
    if (params.length > 0) writeParameterBlock(w, params, names, exec.sendTypes ?? true);
  });
}
