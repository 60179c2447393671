// The commands the backend knows (COMMAND INFO and COMMAND DOCS, read at startup) with how command
// mode handles each: where its keys are, whether it writes, and the policy for keyless commands.
import { CommandNameIndex, type CommandBatch, type CommandDoc, type CommandInfo, type KeySpec } from '@dbproxy/resp';
import { compileKeyFinder, type KeyFinder } from './key-finder';
import { CommandFlag, RequestPolicy, ResponsePolicy } from './command-flags';
import { overlayFor } from './policies';

export { CommandFlag, Handling, RequestPolicy, ResponsePolicy } from './command-flags';

const FLAG_NAMES: Readonly<Record<string, number>> = {
  write: CommandFlag.Write,
  readonly: CommandFlag.ReadOnly,
  admin: CommandFlag.Admin,
  pubsub: CommandFlag.PubSub,
  blocking: CommandFlag.Blocking,
  may_replicate: CommandFlag.MayReplicate,
  noscript: CommandFlag.NoScript,
  movablekeys: CommandFlag.MovableKeys,
};

const REQUEST_TIPS: Readonly<Record<string, number>> = {
  'request_policy:all_shards': RequestPolicy.AllShards,
  'request_policy:all_nodes': RequestPolicy.AllNodes,
  'request_policy:multi_shard': RequestPolicy.MultiShard,
  'request_policy:special': RequestPolicy.Special,
};
const RESPONSE_TIPS: Readonly<Record<string, number>> = {
  'response_policy:one_succeeded': ResponsePolicy.OneSucceeded,
  'response_policy:all_succeeded': ResponsePolicy.AllSucceeded,
  'response_policy:agg_logical_and': ResponsePolicy.AggLogicalAnd,
  'response_policy:agg_logical_or': ResponsePolicy.AggLogicalOr,
  'response_policy:agg_min': ResponsePolicy.AggMin,
  'response_policy:agg_max': ResponsePolicy.AggMax,
  'response_policy:agg_sum': ResponsePolicy.AggSum,
  'response_policy:special': ResponsePolicy.Special,
};

export interface CommandSpec {
  /** Lower case; subcommands as `client|setname`. */
  readonly name: string;
  /** As clients spell it in errors: `GET`, `CLIENT SETNAME`. */
  readonly display: string;
  readonly arity: number;
  readonly flags: number;
  readonly requestPolicy: number;
  readonly responsePolicy: number;
  readonly keys: KeyFinder;
  readonly handling: number;
  /** Why a Rejected command is refused. */
  readonly reason: string;
  readonly subcommands: CommandNameIndex<CommandSpec> | undefined;
}

export class CommandTable {
  private readonly index: CommandNameIndex<CommandSpec>;

  constructor(readonly specs: ReadonlyMap<string, CommandSpec>) {
    this.index = new CommandNameIndex(specs);
  }

  get size(): number {
    return this.specs.size;
  }

  /** The spec of command `i` (its subcommand's, for container commands), or undefined when unknown. */
  get(batch: CommandBatch, i: number): CommandSpec | undefined {
    const src = batch.source(i);
    const spec = this.index.get(src, batch.offset(i, 0), batch.length(i, 0));
    if (spec?.subcommands === undefined || batch.argCount[i] < 2) return spec;
    return spec.subcommands.get(src, batch.offset(i, 1), batch.length(i, 1)) ?? spec;
  }

  /** Looks a name up (`get`, `client|setname`). */
  lookup(name: string): CommandSpec | undefined {
    const [parent, sub] = name.toLowerCase().split('|');
    const spec = this.specs.get(parent);
    return sub === undefined ? spec : spec?.subcommands?.lookup(sub);
  }
}

function bits(names: readonly string[], table: Readonly<Record<string, number>>): number {
  let value = 0;
  for (const n of names) value |= table[n.toLowerCase()] ?? 0;
  return value;
}

function policy(tips: readonly string[], table: Readonly<Record<string, number>>): number {
  for (const tip of tips) {
    const p = table[tip.toLowerCase()];
    if (p !== undefined) return p;
  }
  return 0;
}

/** Servers before Redis 7 describe keys only by first/last/step: the equivalent key spec. */
function legacyKeySpecs(info: CommandInfo): readonly KeySpec[] {
  if (info.keySpecs.length > 0 || info.firstKey <= 0) return info.keySpecs;
  const lastKey = info.lastKey < 0 ? info.lastKey : info.lastKey - info.firstKey;
  return [{ flags: [], beginSearch: { type: 'index', index: info.firstKey }, findKeys: { type: 'range', lastKey, keyStep: Math.max(1, info.step), limit: 0 } }];
}

function buildSpec(info: CommandInfo, doc: CommandDoc | undefined, parent: CommandSpec | undefined): CommandSpec {
  const name = info.name.toLowerCase();
  const scripting = info.aclCategories.some((c) => c.toLowerCase() === '@scripting') && info.keySpecs.length > 0;
  const flags = bits(info.flags, FLAG_NAMES) | (scripting ? CommandFlag.Script : 0);
  const overlay = overlayFor(name, flags, parent);
  const spec: CommandSpec = {
    name,
    display: name.replace('|', ' ').toUpperCase(),
    arity: info.arity,
    flags,
    requestPolicy: policy(info.tips, REQUEST_TIPS),
    responsePolicy: policy(info.tips, RESPONSE_TIPS),
    keys: compileKeyFinder(legacyKeySpecs(info), doc),
    handling: overlay.handling,
    reason: overlay.reason,
    subcommands: undefined,
  };
  if (info.subcommands.length === 0) return spec;
  const subs = info.subcommands.map((sub): [string, CommandSpec] => {
    const subName = sub.name.toLowerCase().split('|')[1] ?? sub.name;
    return [subName, buildSpec(sub, doc?.subcommands.get(sub.name.toLowerCase()) ?? doc?.subcommands.get(subName), spec)];
  });
  return { ...spec, subcommands: new CommandNameIndex(subs) };
}

/** Builds the table from `COMMAND` (INFO of every command) and `COMMAND DOCS`. */
export function buildCommandTable(infos: readonly (CommandInfo | null)[], docs: ReadonlyMap<string, CommandDoc>): CommandTable {
  const specs = new Map<string, CommandSpec>();
  for (const info of infos) {
    if (!info) continue;
    const name = info.name.toLowerCase();
    specs.set(name, buildSpec(info, docs.get(name), undefined));
  }
  return new CommandTable(specs);
}
