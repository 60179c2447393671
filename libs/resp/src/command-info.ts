// COMMAND INFO and COMMAND DOCS replies: arity, flags, key positions and key specs per command.
import { UnexpectedReplyShape } from './errors';
import { field, fieldsOf, integerOf, itemsOf, optionalText, textOf, textsOf } from './reply-shapes';
import type { RespValue } from './value';

export type BeginSearch =
  | { readonly type: 'index'; readonly index: number }
  | { readonly type: 'keyword'; readonly keyword: string; readonly startFrom: number }
  | { readonly type: 'unknown' };

export type FindKeys =
  | { readonly type: 'range'; readonly lastKey: number; readonly keyStep: number; readonly limit: number }
  | { readonly type: 'keynum'; readonly keyNumIndex: number; readonly firstKey: number; readonly keyStep: number }
  | { readonly type: 'unknown' };

export interface KeySpec {
  readonly flags: readonly string[];
  readonly beginSearch: BeginSearch;
  readonly findKeys: FindKeys;
  readonly notes?: string;
}

export interface CommandInfo {
  readonly name: string;
  /** Positive: exact argument count (name included); negative: at least -arity. */
  readonly arity: number;
  readonly flags: readonly string[];
  readonly firstKey: number;
  readonly lastKey: number;
  readonly step: number;
  readonly aclCategories: readonly string[];
  readonly tips: readonly string[];
  readonly keySpecs: readonly KeySpec[];
  readonly subcommands: readonly CommandInfo[];
}

const INFO = 'COMMAND INFO';
const DOCS = 'COMMAND DOCS';

function beginSearch(v: RespValue): BeginSearch {
  const f = fieldsOf(v, INFO);
  const type = textOf(field(f, 'type', INFO), INFO);
  const spec = fieldsOf(field(f, 'spec', INFO), INFO);
  if (type === 'index') return { type, index: integerOf(field(spec, 'index', INFO), INFO) };
  if (type === 'keyword') {
    return { type, keyword: textOf(field(spec, 'keyword', INFO), INFO), startFrom: integerOf(field(spec, 'startfrom', INFO), INFO) };
  }
  return { type: 'unknown' };
}

function findKeys(v: RespValue): FindKeys {
  const f = fieldsOf(v, INFO);
  const type = textOf(field(f, 'type', INFO), INFO);
  const spec = fieldsOf(field(f, 'spec', INFO), INFO);
  const int = (key: string): number => integerOf(field(spec, key, INFO), INFO);
  if (type === 'range') return { type, lastKey: int('lastkey'), keyStep: int('keystep'), limit: int('limit') };
  if (type === 'keynum') return { type, keyNumIndex: int('keynumidx'), firstKey: int('firstkey'), keyStep: int('keystep') };
  return { type: 'unknown' };
}

function keySpec(v: RespValue): KeySpec {
  const f = fieldsOf(v, INFO);
  const notes = optionalText(f, 'notes', INFO);
  const flags = f.get('flags');
  return {
    flags: flags === undefined ? [] : textsOf(flags, INFO),
    beginSearch: beginSearch(field(f, 'begin_search', INFO)),
    findKeys: findKeys(field(f, 'find_keys', INFO)),
    ...(notes === undefined ? {} : { notes }),
  };
}

function commandInfo(v: RespValue): CommandInfo {
  const items = itemsOf(v, INFO);
  if (items.length < 6) throw UnexpectedReplyShape(INFO, 'entry shorter than [name, arity, flags, first, last, step]');
  const at = (i: number): RespValue | undefined => items[i];
  const list = (i: number, read: (v: RespValue) => string[]): string[] => {
    const item = at(i);
    return item === undefined ? [] : read(item);
  };
  const texts = (item: RespValue): string[] => textsOf(item, INFO);
  return {
    name: textOf(items[0], INFO),
    arity: integerOf(items[1], INFO),
    flags: list(2, texts),
    firstKey: integerOf(items[3], INFO),
    lastKey: integerOf(items[4], INFO),
    step: integerOf(items[5], INFO),
    aclCategories: list(6, texts),
    tips: list(7, texts),
    keySpecs: items[8] === undefined ? [] : itemsOf(items[8], INFO).map(keySpec),
    subcommands: items[9] === undefined ? [] : itemsOf(items[9], INFO).map(commandInfo),
  };
}

/** `COMMAND INFO name...` (or `COMMAND`): one entry per name, null for unknown commands. */
export function parseCommandInfo(v: RespValue): Array<CommandInfo | null> {
  return itemsOf(v, INFO).map((entry) => (entry.type === 'null' ? null : commandInfo(entry)));
}

export interface CommandArgumentDoc {
  readonly name: string;
  readonly type: string;
  readonly token?: string;
  readonly keySpecIndex?: number;
  readonly flags: readonly string[];
  readonly arguments: readonly CommandArgumentDoc[];
}

export interface CommandDoc {
  readonly summary?: string;
  readonly since?: string;
  readonly group?: string;
  readonly complexity?: string;
  readonly docFlags: readonly string[];
  readonly arguments: readonly CommandArgumentDoc[];
  readonly subcommands: ReadonlyMap<string, CommandDoc>;
}

function argumentDoc(v: RespValue): CommandArgumentDoc {
  const f = fieldsOf(v, DOCS);
  const token = optionalText(f, 'token', DOCS);
  const keySpecIndex = f.get('key_spec_index');
  const flags = f.get('flags');
  const nested = f.get('arguments');
  return {
    name: textOf(field(f, 'name', DOCS), DOCS),
    type: textOf(field(f, 'type', DOCS), DOCS),
    ...(token === undefined ? {} : { token }),
    ...(keySpecIndex === undefined ? {} : { keySpecIndex: integerOf(keySpecIndex, DOCS) }),
    flags: flags === undefined ? [] : textsOf(flags, DOCS),
    arguments: nested === undefined ? [] : itemsOf(nested, DOCS).map(argumentDoc),
  };
}

function commandDoc(v: RespValue): CommandDoc {
  const f = fieldsOf(v, DOCS);
  const docFlags = f.get('doc_flags');
  const args = f.get('arguments');
  const subcommands = f.get('subcommands');
  const optional = (key: string): Record<string, string> => {
    const text = optionalText(f, key, DOCS);
    return text === undefined ? {} : { [key]: text };
  };
  return {
    ...optional('summary'),
    ...optional('since'),
    ...optional('group'),
    ...optional('complexity'),
    docFlags: docFlags === undefined ? [] : textsOf(docFlags, DOCS),
    arguments: args === undefined ? [] : itemsOf(args, DOCS).map(argumentDoc),
    subcommands: subcommands === undefined ? new Map() : parseCommandDocs(subcommands),
  };
}

/** `COMMAND DOCS name...`: a map (RESP3) or flat array (RESP2) of command name to its doc. */
export function parseCommandDocs(v: RespValue): Map<string, CommandDoc> {
  const docs = new Map<string, CommandDoc>();
  for (const [name, doc] of fieldsOf(v, DOCS)) docs.set(name, commandDoc(doc));
  return docs;
}
