// Chooses the routing template of a statement from its classification and shard-key analysis.
import type { ShardMap } from '@dbproxy/routing';
import type { AstFacts, RefOutcome } from './shard-analysis';
import { MultiShardRejected, ShardKeyMissing, ShardRoutingUnsupported } from './errors';
import type { LexicalAnalysis } from './lexical';
import type { RoutingDecision } from './routing-decision';
import { UNSHARDED } from './routing-decision';
import type { ShardRuleSet } from './shard-rules';
import type { KeyedRef, RouteTemplate } from './shard-template';

/** The template, and whether a dbproxy_shard hint may stand in for a key it lacks. */
export interface TemplateChoice {
  readonly template: RouteTemplate;
  readonly hintable: boolean;
}

interface TemplateConfig {
  readonly rules: ShardRuleSet;
  readonly multiShard: 'all_shards' | 'reject';
}

const fixed = (decision: RoutingDecision, hintable = true): TemplateChoice => ({ template: { kind: 'fixed', decision }, hintable });
const UNSHARDED_CHOICE = fixed(UNSHARDED);
const HINT = "or route it explicitly with a /*dbproxy_shard='<shard>'*/ comment";

/** `failure`: why the statement has no AST facts (too long, parse failure), told to the user when it is refused. */
export function shardTemplate(lex: LexicalAnalysis, facts: AstFacts | undefined, names: ReadonlySet<string>, config: TemplateConfig, failure?: string): TemplateChoice {
  if (config.rules.empty || ![...names].some((n) => config.rules.hasTable(n))) return UNSHARDED_CHOICE;
  if (lex.family === 'transaction' || lex.family === 'session_setting' || lex.family === 'utility') return UNSHARDED_CHOICE;
  if (lex.family === 'ddl') return fixed({ kind: 'reject', error: ShardRoutingUnsupported(`DDL on a sharded table must be run on each shard; ${HINT}`) });
  if (facts === undefined) {
    const why = failure ?? `could not be analyzed (${lex.command})`;
    return fixed({ kind: 'reject', error: ShardRoutingUnsupported(`the statement names a sharded table but ${why}; ${HINT}`) });
  }
  return fromOutcomes(facts, config);
}

function fromOutcomes(facts: AstFacts, config: TemplateConfig): TemplateChoice {
  const outcomes = facts.outcomes;
  const rejected = outcomes.find((o): o is RefOutcome & { kind: 'reject' } => o.kind === 'reject');
  if (rejected !== undefined) return fixed({ kind: 'reject', error: rejected.error }, rejected.error.code === 'DBP_ERR_SQL_SHARD_UNSUPPORTED');
  const missing = outcomes.find((o): o is RefOutcome & { kind: 'missing' } => o.kind === 'missing');
  if (missing !== undefined) {
    const { display, column } = missing.rule;
    const fix = missing.insert ? `list ${column} with a value in the INSERT, ${HINT}` : `add ${column} = <value> or ${column} IN (...) to the WHERE clause, ${HINT}`;
    return fixed({ kind: 'reject', error: ShardKeyMissing(display, column, fix) });
  }
  const opened = outcomes.filter((o): o is RefOutcome & { kind: 'open' } => o.kind === 'open');
  if (opened.length > 0) {
    const reason = `${opened[0].rule.display}.${opened[0].rule.column}: ${opened[0].why}`;
    if (config.multiShard === 'reject') return fixed({ kind: 'reject', error: MultiShardRejected(opened[0].rule.display, opened[0].why) });
    return fixed({ kind: 'all_shards', shards: shardsOf(opened.map((o) => o.rule.map)), reason });
  }
  const refs = outcomes.filter((o): o is RefOutcome & { kind: 'keyed' } => o.kind === 'keyed').map((o): KeyedRef => o.ref);
  if (refs.length === 0 && facts.insert === undefined) return UNSHARDED_CHOICE;
  return { template: facts.insert === undefined ? { kind: 'keyed', refs } : { kind: 'keyed', refs, insert: facts.insert }, hintable: true };
}

function shardsOf(maps: readonly ShardMap[]): string[] {
  const out: string[] = [];
  for (const map of maps) for (const s of map.shards) if (!out.includes(s)) out.push(s);
  return out;
}
