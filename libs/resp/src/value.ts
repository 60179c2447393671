// Decoded RESP2/RESP3 values: one discriminated union for every reply type.

/** How a null was written: `$-1` (RESP2 bulk), `*-1` (RESP2 array) or `_` (RESP3). */
export type NullForm = 'bulk' | 'array' | 'null';

export type RespValue =
  | { readonly type: 'simple'; readonly value: string }
  /** `-ERR ...` or, with `bulk`, RESP3 `!<len>` bulk error. */
  | { readonly type: 'error'; readonly message: string; readonly bulk: boolean }
  /** A number when it is a safe integer, else a bigint. */
  | { readonly type: 'integer'; readonly value: number | bigint }
  /** A view into the scanned buffer (no copy). */
  | { readonly type: 'bulk'; readonly value: Buffer }
  | { readonly type: 'null'; readonly form: NullForm }
  | { readonly type: 'array'; readonly items: readonly RespValue[] }
  | { readonly type: 'boolean'; readonly value: boolean }
  | { readonly type: 'double'; readonly value: number }
  | { readonly type: 'bignum'; readonly value: bigint }
  | { readonly type: 'verbatim'; readonly format: string; readonly value: Buffer }
  | { readonly type: 'map'; readonly entries: ReadonlyArray<readonly [RespValue, RespValue]> }
  | { readonly type: 'set'; readonly items: readonly RespValue[] }
  | { readonly type: 'push'; readonly items: readonly RespValue[] }
  /** RESP3 `|` attributes and the value they annotate. */
  | { readonly type: 'attribute'; readonly entries: ReadonlyArray<readonly [RespValue, RespValue]>; readonly value: RespValue };

export type RespValueType = RespValue['type'];
