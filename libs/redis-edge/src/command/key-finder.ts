// Key positions of a command, computed from the backend's COMMAND INFO key specs the way Redis
// itself does (getKeysUsingKeySpecs), over the scanned command in place: no allocation.
import type { CommandBatch, CommandDoc, CommandArgumentDoc, KeySpec } from '@dbproxy/resp';

/** Argument indices of the keys found, reused for every command of a session. */
export class KeyPositions {
  positions = new Int32Array(16);
  count = 0;

  reset(): void {
    this.count = 0;
  }

  includes(index: number): boolean {
    for (let j = 0; j < this.count; j++) if (this.positions[j] === index) return true;
    return false;
  }

  push(index: number): void {
    if (this.count === this.positions.length) {
      const grown = new Int32Array(this.positions.length * 2);
      grown.set(this.positions);
      this.positions = grown;
    }
    this.positions[this.count++] = index;
  }
}

const Begin = { Index: 0, Keyword: 1, Token: 2 } as const;
const Find = { Range: 0, KeyNum: 1, Single: 2 } as const;

/** One key spec, compiled. */
interface CompiledSpec {
  readonly begin: number;
  /** Begin.Index: the argument index; Begin.Keyword: startfrom (negative counts from the end). */
  readonly index: number;
  /** Begin.Keyword / Begin.Token: the word to search, upper case. */
  readonly keyword: string;
  readonly find: number;
  readonly lastKey: number;
  readonly keyStep: number;
  readonly limit: number;
  readonly keyNumIndex: number;
  readonly firstKey: number;
}

export class KeyFinder {
  /** True when every key spec could be compiled (none is "unknown" without a documented token). */
  readonly complete: boolean;
  /** The key step of the first range spec (MSET: 2), for splitting multi-shard commands. */
  readonly step: number;
  private readonly specs: readonly CompiledSpec[];

  constructor(specs: readonly CompiledSpec[], complete: boolean) {
    this.specs = specs;
    this.complete = complete;
    this.step = specs[0]?.keyStep || 1;
  }

  get empty(): boolean {
    return this.specs.length === 0;
  }

  /** Fills `out` with the argument indices of command `i`'s keys, in spec order. */
  find(batch: CommandBatch, i: number, out: KeyPositions): void {
    out.reset();
    const argc = batch.argCount[i];
    for (const spec of this.specs) {
      const first = this.begin(spec, batch, i, argc, out);
      if (first > 0) this.collect(spec, batch, i, argc, first, out);
    }
  }

  private begin(spec: CompiledSpec, batch: CommandBatch, i: number, argc: number, out: KeyPositions): number {
    if (spec.begin === Begin.Index) return spec.index;
    if (spec.begin === Begin.Token) {
      // A key found by an earlier spec may spell the token (SORT store STORE dest): skip it.
      for (let k = 1; k < argc - 1; k++) if (!out.includes(k) && batch.argEquals(i, k, spec.keyword)) return k + 1;
      return 0;
    }
    const from = spec.index > 0 ? spec.index : argc + spec.index;
    const to = spec.index > 0 ? argc - 1 : 1;
    for (let k = from; ; k = from <= to ? k + 1 : k - 1) {
      if (k >= argc || k < 1) return 0;
      if (batch.argEquals(i, k, spec.keyword)) return k + 1;
      if (k === to) return 0;
    }
  }

  private collect(spec: CompiledSpec, batch: CommandBatch, i: number, argc: number, first: number, out: KeyPositions): void {
    let last: number;
    let step = spec.keyStep;
    if (spec.find === Find.Single) {
      last = first;
      step = 1;
    } else if (spec.find === Find.Range) {
      if (spec.lastKey >= 0) last = first + spec.lastKey;
      else if (spec.limit === 0) last = argc + spec.lastKey;
      else last = first + Math.floor((argc - first) / spec.limit) + spec.lastKey;
    } else {
      if (first + spec.keyNumIndex >= argc) return;
      const numKeys = batch.argToInt(i, first + spec.keyNumIndex);
      if (!Number.isSafeInteger(numKeys) || numKeys < 0) return;
      first += spec.firstKey;
      last = first + (numKeys - 1) * step;
    }
    if (last >= argc || last < first || first >= argc || step < 1) return;
    for (let k = first; k <= last; k += step) out.push(k);
  }
}

/** The token introducing the documented key argument of spec `index` (SORT ... STORE dest). */
function tokenOf(args: readonly CommandArgumentDoc[], index: number): string | undefined {
  for (const arg of args) {
    if (arg.keySpecIndex === index && arg.type === 'key') return arg.token;
    const nested = tokenOf(arg.arguments, index);
    if (nested !== undefined) return nested;
    if (arg.token !== undefined && arg.arguments.some((a) => a.keySpecIndex === index && a.type === 'key' && a.token === undefined)) return arg.token;
  }
  return undefined;
}

function compileSpec(spec: KeySpec, index: number, doc: CommandDoc | undefined): CompiledSpec | undefined {
  const base = { index: 0, keyword: '', find: Find.Range as number, lastKey: 0, keyStep: 1, limit: 0, keyNumIndex: 0, firstKey: 0 };
  const bs = spec.beginSearch;
  const fk = spec.findKeys;
  if (bs.type === 'unknown') {
    const token = doc ? tokenOf(doc.arguments, index) : undefined;
    return token === undefined ? undefined : { ...base, begin: Begin.Token, keyword: token.toUpperCase(), find: Find.Single };
  }
  const begin = bs.type === 'index' ? { begin: Begin.Index, index: bs.index } : { begin: Begin.Keyword, index: bs.startFrom, keyword: bs.keyword.toUpperCase() };
  if (fk.type === 'range') return { ...base, ...begin, find: Find.Range, lastKey: fk.lastKey, keyStep: fk.keyStep, limit: fk.limit };
  if (fk.type === 'keynum') return { ...base, ...begin, find: Find.KeyNum, keyNumIndex: fk.keyNumIndex, firstKey: fk.firstKey, keyStep: fk.keyStep };
  return undefined;
}

/**
 * Compiles a command's key specs. Specs whose begin_search is "unknown" are resolved from
 * COMMAND DOCS when the key argument they describe has a token (SORT's STORE destination);
 * pattern-derived keys (SORT BY/GET) are not keys the proxy routes by.
 */
export function compileKeyFinder(specs: readonly KeySpec[], doc: CommandDoc | undefined): KeyFinder {
  const compiled: CompiledSpec[] = [];
  let complete = true;
  specs.forEach((spec, index) => {
    const c = compileSpec(spec, index, doc);
    if (c) compiled.push(c);
    else if (!isPatternSpec(spec, index, doc)) complete = false;
  });
  return new KeyFinder(compiled, complete);
}

/** SORT's BY/GET spec: documented as a pattern argument, not a key to route by. */
function isPatternSpec(spec: KeySpec, index: number, doc: CommandDoc | undefined): boolean {
  const walk = (args: readonly CommandArgumentDoc[]): boolean => args.some((a) => (a.keySpecIndex === index && a.type === 'pattern') || walk(a.arguments));
  return spec.beginSearch.type === 'unknown' && doc !== undefined && walk(doc.arguments);
}
