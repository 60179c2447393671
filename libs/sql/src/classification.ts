// The classification of a statement: family, replica safety with reasons, tables, transaction and session effects.

/** What a statement does to the client's transaction. */
export type TransactionEffect =
  | 'none'
  | 'begin'
  | 'commit'
  | 'rollback'
  /** COMMIT AND CHAIN / ROLLBACK AND CHAIN: the transaction ends and a new one starts at once. */
  | 'commit_and_chain'
  | 'rollback_and_chain'
  | 'savepoint'
  | 'release_savepoint'
  | 'rollback_to_savepoint'
  /** SET autocommit = 0: every later statement runs inside an implicit transaction. */
  | 'autocommit_off'
  | 'autocommit_on'
  /** MySQL DDL, LOCK TABLES, BEGIN...: commits an open transaction first. */
  | 'implicit_commit';

/** Settings a proxy replays on every backend connection it hands the session. */
export type ReplayableSetting = 'names' | 'character_set' | 'database';

/** What a statement does to session state. */
export type SessionEffect =
  | { readonly kind: 'none' }
  /** Deterministic state: store the statement text and replay it on newly chosen connections. */
  | { readonly kind: 'replay'; readonly setting: ReplayableSetting }
  /** State that lives on the backend connection: pin the session to it for the rest of its life. */
  | { readonly kind: 'pin'; readonly reason: string };

/** Why a statement may not run on a replica. */
export type UnsafeReasonCode =
  | 'not_a_read'
  | 'locking_read'
  | 'state_function'
  | 'lock_function'
  | 'sequence_function'
  | 'side_effect_function'
  | 'user_function'
  | 'select_into'
  | 'writable_cte'
  | 'procedure_call'
  | 'user_variable'
  | 'session_variable'
  | 'parse_failed'
  | 'too_complex'
  | 'multi_statement'
  /** MariaDB BEGIN NOT ATOMIC ... END: a block whose body is not analyzed. */
  | 'compound_statement'
  | 'unterminated';

export interface UnsafeReason {
  readonly code: UnsafeReasonCode;
  readonly detail: string;
}

/** A table the statement reads or writes; `schema` only when the statement names it. */
export interface TableRef {
  readonly schema?: string;
  readonly name: string;
  readonly access: 'read' | 'write';
}

export type StatementFamily = 'read' | 'write' | 'ddl' | 'transaction' | 'session_setting' | 'session_state' | 'utility';

interface ClassificationCommon {
  /** The leading command, lower case: `select`, `insert`, `set`, `show`... (`batch` for several statements). */
  readonly command: string;
  /** True only when every statement is a safe read: a replica may serve it. */
  readonly replicaSafe: boolean;
  /** Why it is not replica-safe; empty when it is. */
  readonly unsafeReasons: readonly UnsafeReason[];
  readonly tables: readonly TableRef[];
  readonly transaction: TransactionEffect;
  readonly session: SessionEffect;
  /** Statements in the text (a batch has more than one). */
  readonly statementCount: number;
  /** Who understood the statement: node-sql-parser, or the tokenizer alone. */
  readonly analyzedBy: 'parser' | 'tokens';
}

/** The classification, discriminated by `family`. */
export type Classification =
  | (ClassificationCommon & { readonly family: 'read'; readonly locking: boolean })
  | (ClassificationCommon & { readonly family: 'write'; readonly returning: boolean })
  | (ClassificationCommon & { readonly family: 'ddl' })
  | (ClassificationCommon & { readonly family: 'transaction' })
  | (ClassificationCommon & { readonly family: 'session_setting'; readonly setting: ReplayableSetting })
  | (ClassificationCommon & { readonly family: 'session_state'; readonly pinReason: string })
  | (ClassificationCommon & { readonly family: 'utility' });

/** Precedence when a batch mixes families: the most demanding wins. */
const FAMILY_RANK: Record<StatementFamily, number> = {
  utility: 0,
  read: 1,
  session_setting: 2,
  write: 3,
  ddl: 4,
  transaction: 5,
  session_state: 6,
};

export function dominantFamily(a: StatementFamily, b: StatementFamily): StatementFamily {
  return FAMILY_RANK[b] > FAMILY_RANK[a] ? b : a;
}

export const NO_SESSION_EFFECT: SessionEffect = Object.freeze({ kind: 'none' });
