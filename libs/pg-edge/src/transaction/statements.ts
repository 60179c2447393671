// Prepared statements owned by a transaction-mode session: text, parameter types (as given, and as
// the backend inferred them), and the routing of the statement, re-prepared wherever they run.
import type { SqlRoute } from '@dbproxy/sql';

export interface ClientStatement {
  /** '' is the unnamed statement. */
  readonly name: string;
  readonly sql: string;
  /** Parameter type OIDs from the client's Parse (0 = let the server infer). */
  readonly paramTypes: readonly number[];
  /** Types the backend inferred (ParameterDescription), used when re-preparing elsewhere. */
  inferred: readonly number[] | undefined;
  readonly route: SqlRoute;
  /** Text and parameter types: the name of its backend statement on each pooled connection is found by this (BackendStatements). */
  readonly key: string;
}

/** Expected answers to what was sent to the backend, in order. */
export type ExpectKind = 'parse' | 'bind' | 'describe_statement' | 'describe_portal' | 'execute' | 'close' | 'sync' | 'query' | 'setup';

export interface Expectation {
  readonly kind: ExpectKind;
  /** False for messages the proxy injected: their answers are swallowed. */
  readonly forward: boolean;
  /** describe_statement: where inferred types go. */
  readonly statement?: ClientStatement;
  /** The backend's error for this message is replaced by this one (proxy-side refusals). */
  readonly replaceError?: Buffer;
  /** Undoes the registry change when the backend skips or fails the message. */
  readonly undo?: () => void;
  /** close: the Close sent ahead of a unit on a connection fresh from the pool (its CloseComplete proves the backend read on). */
  readonly probe?: true;
}

/** What an Expectation carries beside its kind and whether its answer is forwarded. */
export type ExpectationExtras = Partial<Pick<Expectation, 'statement' | 'replaceError' | 'undo' | 'probe'>>;

/**
 * An Expectation with every field present, in one order: the relay reads `kind` and `forward` of
 * each answer, and objects of one hidden class keep those reads inline (literals with different
 * optional fields made them megamorphic lookups).
 */
export function expectation(kind: ExpectKind, forward: boolean, extras?: ExpectationExtras): Expectation {
  return { kind, forward, statement: extras?.statement, replaceError: extras?.replaceError, undo: extras?.undo, probe: extras?.probe };
}

export class StatementRegistry {
  private readonly statements = new Map<string, ClientStatement>();

  constructor(private readonly limit: number) {}

  get(name: string): ClientStatement | undefined {
    return this.statements.get(name);
  }

  has(name: string): boolean {
    return this.statements.has(name);
  }

  /** Named statements beyond the limit are refused (the unnamed one is always allowed). */
  full(name: string): boolean {
    return name !== '' && !this.statements.has(name) && this.statements.size >= this.limit;
  }

  set(statement: ClientStatement): void {
    this.statements.set(statement.name, statement);
  }

  /** Removes `statement` if the name still refers to it. */
  remove(statement: ClientStatement): void {
    if (this.statements.get(statement.name) === statement) this.statements.delete(statement.name);
  }

  delete(name: string): ClientStatement | undefined {
    const statement = this.statements.get(name);
    this.statements.delete(name);
    return statement;
  }

  get size(): number {
    return this.statements.size;
  }
}
