// Reads a KILL statement the edge intercepts: KILL [HARD | SOFT] [CONNECTION | QUERY] <id>, and
// recognizes the forms it refuses (KILL QUERY ID <query id>, KILL USER <name>, an expression).
import { SqlScanner, Tok } from '@dbproxy/sql';

/** What one KILL statement asks for. */
export type KillRequest =
  | { readonly kind: 'kill'; readonly scope: 'query' | 'connection'; readonly id: number }
  | { readonly kind: 'refused'; readonly form: string };

/**
 * The statement's code with comments taken out. Executable comments (`/*!50000 QUERY *\/`,
 * `/*M!100000 ... *\/`) are code to the server, so their content stays.
 */
function codeOf(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      const body = sql.slice(i + 2, end < 0 ? sql.length : end);
      const executable = /^M?!\d*/.exec(body);
      out += executable ? ` ${body.slice(executable[0].length)} ` : ' ';
      i = end < 0 ? sql.length : end + 2;
    } else if (c === '#' || (c === '-' && next === '-' && /\s/.test(sql[i + 2] ?? ' '))) {
      const end = sql.indexOf('\n', i);
      out += ' ';
      i = end < 0 ? sql.length : end + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const MAX_ID = 0xffffffff;

/** The KILL request in `sql` (one statement whose command is KILL), as the edge serves or refuses it. */
export function parseKill(sql: string): KillRequest {
  const words = codeOf(sql).trim().replace(/;\s*$/, '').trim().split(/\s+/);
  let i = 1; // words[0] is KILL
  const upper = (n: number): string => (words[n] ?? '').toUpperCase();
  if (upper(i) === 'HARD' || upper(i) === 'SOFT') i++;
  let scope: 'query' | 'connection' = 'connection';
  if (upper(i) === 'CONNECTION') i++;
  else if (upper(i) === 'QUERY') {
    scope = 'query';
    i++;
    if (upper(i) === 'ID') return { kind: 'refused', form: 'KILL QUERY ID' };
  }
  if (upper(i) === 'USER') return { kind: 'refused', form: 'KILL USER' };
  const id = words[i] ?? '';
  if (i !== words.length - 1 || !/^\d{1,10}$/.test(id) || Number(id) > MAX_ID) return { kind: 'refused', form: 'KILL with anything but a connection id' };
  return { kind: 'kill', scope, id: Number(id) };
}

/** Whether a statement text starts with KILL (a COM_STMT_PREPARE the edge refuses). */
export function startsWithKill(sql: string): boolean {
  return /^[\s(]*kill\b/i.test(codeOf(sql));
}

/**
 * A multi-statement request with KILL as a word of its code (executable comments included, strings
 * and quoted names not): never sent to a server, whose KILL would run with the pool's privilege.
 * Text the scanner cannot read counts as naming it.
 */
export function batchMentionsKill(sql: string): boolean {
  const scanner = new SqlScanner('mysql');
  scanner.reset(sql);
  for (let kind = scanner.next(); kind !== Tok.End; kind = scanner.next()) {
    if (kind === Tok.Error) return true;
    if (kind === Tok.Word && scanner.end - scanner.start === 4 && sql.slice(scanner.start, scanner.end).toLowerCase() === 'kill') return true;
  }
  return false;
}
