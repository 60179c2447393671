// What the read-only listener runs on a replica: replica-safe reads, session-local reads, transaction control and harmless session settings; the rest is refused.
import { tokenize, Tok, type SqlRoute, type UnsafeReason } from '@dbproxy/sql';

/** Reasons that keep a read off a replica on the read-write listener but change nothing on the server: values of the session's own connection. */
const SESSION_LOCAL: ReadonlySet<string> = new Set(['not_a_read', 'user_variable', 'session_variable', 'state_function']);

/** Utility statements that only read (SHOW, EXPLAIN, ...). KILL never gets here: the edge serves it (src/kill). */
const READING_UTILITIES: ReadonlySet<string> = new Set(['show', 'explain', 'describe', 'desc', 'analyze', 'help', 'checksum', 'get']);

/** Session variables that only serve binary logging, replication or server debugging: a read-only session has no use for them. */
const REFUSED_VARIABLES = /^(sql_log_bin|gtid_\w*|server_id|pseudo_\w*|skip_replication|sql_slave_\w*|slave_\w*|debug|debug_dbug|debug_sync|wsrep_\w*)$/i;

/**
 * Why the read-only listener refuses the statement, or null when it runs on a replica. Only
 * the statement's classification and fingerprint are read (plans are cached per classification).
 */
export function readOnlyRefusal(route: SqlRoute): string | null {
  const c = route.classification;
  if (c.replicaSafe) return null;
  const command = c.command.toUpperCase();
  if (c.statementCount > 1) return 'a multi-statement batch';
  const unsafe = c.unsafeReasons.find((r) => !SESSION_LOCAL.has(r.code));
  switch (c.family) {
    case 'read':
      return unsafe === undefined ? null : describe(unsafe);
    case 'session_setting':
      return null;
    case 'transaction':
      if (unsafe !== undefined) return describe(unsafe);
      return /\bREAD WRITE\b/.test(route.fingerprint.text) ? 'START TRANSACTION READ WRITE' : null;
    case 'utility':
      if (unsafe !== undefined) return describe(unsafe);
      return READING_UTILITIES.has(c.command) ? null : command;
    case 'session_state':
      if (c.command !== 'set') return `${command} (${c.pinReason})`;
      return unsafe !== undefined ? describe(unsafe) : refusedSet(route.fingerprint.text);
    default:
      return `${command} (${c.family === 'ddl' ? 'DDL' : 'a write'})`;
  }
}

function describe(reason: UnsafeReason): string {
  switch (reason.code) {
    case 'locking_read':
      return `a locking read (${reason.detail})`;
    case 'lock_function':
      return `a lock function (${reason.detail})`;
    case 'sequence_function':
      return `a sequence function (${reason.detail})`;
    case 'user_function':
      return `a stored function (${reason.detail}), which may write`;
    case 'procedure_call':
      return 'CALL';
    default:
      return reason.detail;
  }
}

/** A SET that assigns a variable only binary logging, replication or debugging use, or SET STATEMENT (its statement is not judged). */
function refusedSet(text: string): string | null {
  let tokens;
  try {
    tokens = tokenize(text, 'mysql');
  } catch {
    return 'a SET that cannot be read';
  }
  let depth = 0;
  let expectTarget = true;
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === Tok.LParen) depth++;
    else if (t.kind === Tok.RParen) depth--;
    else if (t.kind === Tok.Comma && depth === 0) expectTarget = true;
    else if (expectTarget && t.kind === Tok.Word && /^(SESSION|LOCAL)$/i.test(t.text)) continue;
    else if (expectTarget) {
      expectTarget = false;
      if (i === 1 && t.kind === Tok.Word && t.text.toUpperCase() === 'STATEMENT') return 'SET STATEMENT ... FOR';
      const name = t.kind === Tok.Variable ? t.text.replace(/^@@((session|local)\.)?/i, '') : t.text.replace(/`/g, '');
      if (REFUSED_VARIABLES.test(name)) return `SET ${name}`;
    }
  }
  return null;
}
