// The text the xa-coordinator runs for a statement on an XA fanout table. The coordinator's
// participant connections have no default database and run text only, so: every table the
// statement names must be qualified with its database, and a COM_STMT_EXECUTE is sent as the
// prepared text with its parameters inlined as literals (strings and bytes as hex literals with a
// character set introducer, so no value is ever parsed as SQL).
import { Buffer } from 'node:buffer';
import { decodeStmtExecute, type MysqlPacket, type MysqlValue, type ParameterType } from '@dbproxy/protocol-mysql';
import { Tok, tokenize, type Classification } from '@dbproxy/sql';
import type { ClientStatement } from '../session/statement-registry';

/** What the session knows about an execute's parameters. */
export interface ExecuteParams {
  readonly packet: MysqlPacket;
  readonly statement: ClientStatement;
  readonly capabilities: number;
  readonly encoding: BufferEncoding;
}

/** The reason a statement cannot go to the coordinator, or null. */
export function unqualifiedTable(c: Classification): string | null {
  const bare = c.tables.find((t) => t.schema === undefined || t.schema === '');
  return bare === undefined ? null : `table ${bare.name} is not qualified with its database (write db.${bare.name}: the XA participants run it without a default database)`;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** One parameter value as a SQL literal; null when it has no safe literal. */
export function sqlLiteral(v: MysqlValue): string | null {
  if (v === null) return 'NULL';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : null;
  if (typeof v === 'string') return v.length === 0 ? "''" : `_utf8mb4 X'${Buffer.from(v, 'utf8').toString('hex')}'`;
  if (Buffer.isBuffer(v)) return v.length === 0 ? "_binary ''" : `_binary X'${v.toString('hex')}'`;
  const micro = (us: number): string => (us > 0 ? `.${pad(us, 6)}` : '');
  switch (v.kind) {
    case 'date':
      return `'${pad(v.year, 4)}-${pad(v.month)}-${pad(v.day)}'`;
    case 'datetime':
      return `'${pad(v.year, 4)}-${pad(v.month)}-${pad(v.day)} ${pad(v.hour)}:${pad(v.minute)}:${pad(v.second)}${micro(v.microsecond)}'`;
    case 'time':
      return `'${v.negative ? '-' : ''}${v.days * 24 + v.hours}:${pad(v.minutes)}:${pad(v.seconds)}${micro(v.microseconds)}'`;
    default:
      return null;
  }
}

/** The prepared text with each `?` replaced by its parameter's literal; a string reason when it cannot be. */
export function inlinedExecute(p: ExecuteParams): { sql: string } | { refused: string } {
  const { statement } = p;
  if (statement.longData !== null) return { refused: 'parameters sent with COM_STMT_SEND_LONG_DATA are not inlined; bind them with the execute' };
  const previousTypes: ParameterType[] = [];
  const types = statement.types;
  if (types) for (let i = 0; i + 1 < types.length; i += 2) previousTypes.push({ type: types[i] as number, unsigned: ((types[i + 1] as number) & 0x80) !== 0 });
  const params = decodeStmtExecute(p.packet.payload, { paramCount: statement.paramCount, capabilities: p.capabilities, previousTypes, encoding: p.encoding }).params;
  return inlineParameters(statement.entry.sql.toString(p.encoding), params);
}

/** `text` with each `?` placeholder (not those in strings, identifiers or comments) replaced by its value's literal. */
export function inlineParameters(text: string, params: readonly MysqlValue[]): { sql: string } | { refused: string } {
  let out = '';
  let at = 0;
  let n = 0;
  for (const t of tokenize(text, 'mysql')) {
    if (t.kind !== Tok.Placeholder) continue;
    const value = params[n++];
    if (value === undefined) return { refused: `the statement has more placeholders than its ${params.length} parameters` };
    const literal = sqlLiteral(value);
    if (literal === null) return { refused: `parameter ${n} has no SQL literal (not a finite number, string, bytes or temporal)` };
    out += `${text.slice(at, t.start)}${literal}`;
    at = t.end;
  }
  if (n !== params.length) return { refused: `the statement has ${n} placeholders for ${params.length} parameters` };
  return { sql: out + text.slice(at) };
}
