// Public entry point of sql: the tokenizer, fingerprints, classification and shard routing of SQL statements.
export * from './errors';
export { DEFAULT_MAX_PARSE_TOKENS, SqlRouter, type PreparedRoute, type SqlRoute, type SqlRouterOptions, type SqlRouterStats } from './router';
export type { Fingerprint } from './analyze';
export type {
  Classification,
  ReplayableSetting,
  SessionEffect,
  StatementFamily,
  TableRef,
  TransactionEffect,
  UnsafeReason,
  UnsafeReasonCode,
} from './classification';
export type { RoutingHints } from './comments';
export type { InsertRowGroup, RoutingDecision } from './routing-decision';
export type { SqlValue } from './literals';
export { SqlScanner, Tok, type Dialect, type TokKind, type UnterminatedKind } from './tokenizer';
export { tokenize, type Token } from './tokenize';
export { Fingerprinter, StatementScan } from './fingerprint';
