// SET statements: autocommit, replayable character-set settings, session state that pins, server settings.
import type { ReplayableSetting, TransactionEffect } from './classification';
import { Kw } from './keywords';
import { NormTok } from './fingerprint';
import { identifierName, TokenCursor } from './normalized';
import type { Shape } from './lexical';
import { Tok, type Dialect } from './tokenizer';

interface SetItems {
  replay?: ReplayableSetting;
  pinReason?: string;
  server?: string;
  autocommit?: TransactionEffect;
  autocommitSlot: number;
}

/** Classifies `SET ...` starting at token i. */
export function classifySet(c: TokenCursor, i: number, dialect: Dialect): Shape {
  const command = 'set';
  let j = i + 1;
  const first = c.word(j);
  if (first === 'PASSWORD' || (first === 'DEFAULT' && c.word(j + 1) === 'ROLE')) return { family: 'ddl', command };
  if (c.kw(j) === Kw.SESSION && (c.kw(j + 1) === Kw.AUTHORIZATION || c.word(j + 1) === 'CHARACTERISTICS')) {
    return { family: 'session_state', command, session: { kind: 'pin', reason: 'SET SESSION AUTHORIZATION/CHARACTERISTICS' } };
  }
  if (c.kw(j) === Kw.SESSION || c.kw(j) === Kw.LOCAL) j++;
  if (c.kw(j) === Kw.TRANSACTION) return { family: 'session_state', command, session: { kind: 'pin', reason: 'transaction characteristics' } };
  if (c.kw(j) === Kw.ROLE) return { family: 'session_state', command, session: { kind: 'pin', reason: 'SET ROLE' } };
  const items = readItems(c, i + 1, dialect);
  if (items.pinReason !== undefined || (items.replay !== undefined && items.autocommit !== undefined)) {
    return {
      family: 'session_state',
      command,
      session: { kind: 'pin', reason: items.pinReason ?? 'mixed SET' },
      transaction: items.autocommit ?? 'none',
      autocommitSlot: items.autocommitSlot,
    };
  }
  if (items.autocommit !== undefined) return { family: 'transaction', command, transaction: items.autocommit, autocommitSlot: items.autocommitSlot };
  if (items.replay !== undefined) return { family: 'session_setting', command, setting: items.replay, session: { kind: 'replay', setting: items.replay } };
  return { family: 'ddl', command: 'set' }; // SET GLOBAL / PERSIST: a server setting
}

/** Walks the comma-separated assignments of a SET. */
function readItems(c: TokenCursor, from: number, dialect: Dialect): SetItems {
  const items: SetItems = { autocommitSlot: -1 };
  let k = from;
  while (k < c.length) {
    let scope = '';
    if (c.kw(k) === Kw.GLOBAL || c.kw(k) === Kw.PERSIST || c.kw(k) === Kw.PERSIST_ONLY || c.kw(k) === Kw.SESSION || c.kw(k) === Kw.LOCAL) {
      scope = c.word(k);
      k++;
    }
    readItem(c, k, scope, dialect, items);
    while (k < c.length && !(c.tokens[k].kind === Tok.Comma && c.tokens[k].depth === 0)) k++;
    k++;
  }
  return items;
}

function readItem(c: TokenCursor, k: number, scope: string, dialect: Dialect, items: SetItems): void {
  if (c.kw(k) === Kw.NAMES) {
    items.replay ??= 'names';
    return;
  }
  if ((c.kw(k) === Kw.CHARACTER && c.kw(k + 1) === Kw.SET) || c.kw(k) === Kw.CHARSET) {
    items.replay ??= 'character_set';
    return;
  }
  const target = c.at(k);
  if (target === undefined) return;
  let name: string;
  if (target.kind === Tok.Variable) {
    if (!target.text.startsWith('@@')) {
      items.pinReason ??= `user variable ${target.text}`;
      return;
    }
    const m = /^@@(?:(global|persist|persist_only|session|local)\.)?(.*)$/i.exec(target.text);
    if (m !== null && m[1] !== undefined && ['global', 'persist', 'persist_only'].includes(m[1].toLowerCase())) scope = 'GLOBAL';
    name = m === null ? target.text : m[2];
  } else if (target.kind === Tok.Word || target.kind === Tok.QuotedIdent) {
    name = identifierName(target);
    if (c.at(k + 1)?.kind === Tok.Dot && c.at(k + 2) !== undefined) name = `${name}.${identifierName(c.tokens[k + 2])}`;
  } else return;
  if (scope === 'GLOBAL' || scope === 'PERSIST' || scope === 'PERSIST_ONLY') {
    items.server ??= `SET GLOBAL ${name}`;
    return;
  }
  if (name.toLowerCase() === 'autocommit') readAutocommit(c, k + 1, items);
  else if (dialect === 'postgresql' && name.toLowerCase() === 'client_encoding') items.pinReason ??= 'client_encoding';
  else items.pinReason ??= `session variable ${name}`;
}

/** `= 0`, `= ON`, `TO false`...: a literal slot is decided when bound; words now. */
function readAutocommit(c: TokenCursor, k: number, items: SetItems): void {
  const op = c.at(k);
  const v = op !== undefined && (op.text === '=' || op.text === ':=' || c.kw(k) === Kw.TO) ? k + 1 : k;
  const value = c.at(v);
  if (value?.kind === NormTok.Slot) {
    items.autocommit = 'autocommit_off'; // replaced once the value is known
    items.autocommitSlot = value.slot;
    return;
  }
  const word = c.word(v);
  items.autocommit = word === 'OFF' || word === 'FALSE' ? 'autocommit_off' : word === 'ON' || word === 'TRUE' ? 'autocommit_on' : 'autocommit_off';
}
