// Command flags (from COMMAND INFO) and the handling classes command mode assigns to commands.

/** Command flags from COMMAND INFO that routing reads, as bits. */
export const CommandFlag = {
  Write: 1,
  ReadOnly: 2,
  Admin: 4,
  PubSub: 8,
  Blocking: 16,
  MayReplicate: 32,
  NoScript: 64,
  MovableKeys: 128,
  /** ACL category @scripting with keys (EVAL, EVALSHA, FCALL and their _RO forms). */
  Script: 256,
} as const;

/** COMMAND INFO tips `request_policy:*` (Redis Cluster client guidance). */
export const RequestPolicy = { Default: 0, AllShards: 1, AllNodes: 2, MultiShard: 3, Special: 4 } as const;
/** COMMAND INFO tips `response_policy:*`. */
export const ResponsePolicy = { Default: 0, OneSucceeded: 1, AllSucceeded: 2, AggLogicalAnd: 3, AggLogicalOr: 4, AggMin: 5, AggMax: 6, AggSum: 7, Special: 8 } as const;

/** What command mode does with a command (policies.ts assigns these). */
export const Handling = {
  /** Routed by its keys; without keys by its request policy (home node, or every shard). */
  Forward: 0,
  /** Runs on a leased dedicated connection (BLPOP, BLMOVE, WAIT, ...). */
  Blocking: 1,
  /** XREAD / XREADGROUP: leased only when BLOCK is given. */
  BlockingIfBlock: 2,
  /** Answered by the proxy (PING, ECHO, QUIT, RESET, CLIENT ID/GETNAME/SETINFO). */
  Local: 3,
  /** Changes replayable connection state (HELLO, AUTH, SELECT, CLIENT SETNAME). */
  State: 4,
  /** MULTI, EXEC, DISCARD, WATCH, UNWATCH. */
  Transaction: 5,
  /** (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE. */
  PubSub: 6,
  /** SCAN across every node with a composite cursor. */
  Scan: 7,
  /** PUBLISH: routed by its channel over standalone shards, to any node of a cluster. */
  Publish: 8,
  /** Refused: unsafe or unknown connection-state semantics (reason in the spec). */
  Rejected: 9,
  /** Refused: administrative (COMMAND INFO flag `admin`). */
  Administrative: 10,
  /** Refused as Redis refuses cluster commands on a non-cluster server. */
  ClusterCommand: 11,
  /** SCRIPT KILL, FUNCTION KILL: at once, on leased connections to every shard (kill.ts). */
  Kill: 12,
} as const;
