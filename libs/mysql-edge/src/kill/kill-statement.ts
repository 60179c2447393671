// Reads a KILL statement the edge intercepts: KILL [HARD | SOFT] [CONNECTION | QUERY] <id>, and
// recognizes the forms it refuses (KILL QUERY ID <query id>, KILL USER <name>, an expression).
import { SqlScanner, Tok } from '@dbproxy/sql';

/** What one KILL statement asks for. */
export type KillRequest =
  | { readonly kind: 'kill'; readonly scope: 'query' | 'connection'; readonly id: number }
  | { readonly kind: 'refused'; readonly form: string };

/** The texts of the statement's code tokens: comments out, executable comments' content in (libs/sql's scanner); null when it cannot be read. */
function codeWords(sql: string): string[] | null {
  const scanner = new SqlScanner('mysql');
  scanner.reset(sql);
  const words: string[] = [];
  for (let kind = scanner.next(); kind !== Tok.End; kind = scanner.next()) {
    if (kind === Tok.Error) return null;
    if (kind !== Tok.Comment) words.push(sql.slice(scanner.start, scanner.end));
  }
  return words;
}

const MAX_ID = 0xffffffff;

/** The KILL request in `sql` (one statement whose command is KILL), as the edge serves or refuses it. */
export function parseKill(sql: string): KillRequest {
  const words = codeWords(sql) ?? [];
  if (words[words.length - 1] === ';') words.pop();
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
  const first = (codeWords(sql) ?? []).find((w) => w !== '(');
  return first?.toLowerCase() === 'kill';
}

/**
 * A multi-statement request with KILL as a word of its code (executable comments included, strings
 * and quoted names not): never sent to a server, whose KILL would run with the pool's privilege.
 * Text the scanner cannot read counts as naming it. A word token's text is bare: strings and
 * quoted names keep their quotes.
 */
export function batchMentionsKill(sql: string): boolean {
  return (codeWords(sql) ?? ['kill']).some((w) => w.toLowerCase() === 'kill');
}
