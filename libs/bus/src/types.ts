// The bus interface every service codes against; NATS and embedded implementations both satisfy it.

/** Message headers; W3C trace context travels here as `traceparent` / `tracestate`. */
export type BusHeaders = Readonly<Record<string, string>>;

/** A message as delivered to a subscriber or returned as a reply. */
export interface BusMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: BusHeaders;
}

export type MessageHandler = (msg: BusMessage) => void | Promise<void>;
export type RequestHandler = (msg: BusMessage) => Promise<Uint8Array>;

/** A live subscription, serve registration or KV watch. */
export interface Subscription {
  /**
   * Resolves once the subscription is active on the server (subscribe/serve) or once the
   * current values were delivered (KV watch). Stays pending while the bus has never
   * connected; never rejects.
   */
  readonly ready: Promise<void>;
  /** Stops delivery; idempotent. */
  unsubscribe(): void;
}

export type BusStatus = 'connected' | 'disconnected' | 'closed';
export type BusKind = 'nats' | 'embedded';

export interface RequestOptions {
  /** Deadline for the reply; the request rejects with DBP_ERR_BUS_TIMEOUT after it. */
  readonly timeoutMs: number;
  readonly headers?: Record<string, string>;
}

export interface ServeOptions {
  /** Queue group: each request goes to one member of the group. Default `dbproxy`. */
  readonly queue?: string;
}

export interface KvOptions {
  /** Revisions kept per key (1..64, JetStream's limit). Default 1. */
  readonly history?: number;
}

export interface Bus {
  readonly kind: BusKind;
  readonly name: string;
  /**
   * Fire and forget. Never throws on an outage: while disconnected (or not yet connected) the
   * message waits in a bounded buffer and goes out on reconnection; beyond the bound it is
   * dropped and reported on `Channels.busMessageDropped` with reason `publish-failed`. Throws
   * only on caller errors (invalid subject or header, payload too large).
   */
  publish(subject: string, payload: Uint8Array, headers?: Record<string, string>): void;
  /** `*` matches one token, `>` one or more trailing tokens. Handler errors are reported, never thrown. */
  subscribe(pattern: string, handler: MessageHandler): Subscription;
  /** Rejects with DBP_ERR_BUS_TIMEOUT, _NO_RESPONDERS, _REMOTE (error reply) or _UNAVAILABLE. */
  request(subject: string, payload: Uint8Array, opts: RequestOptions): Promise<BusMessage>;
  /** Answers requests; a handler error becomes an error reply (DBP_ERR_BUS_REMOTE at the caller). */
  serve(pattern: string, handler: RequestHandler, opts?: ServeOptions): Subscription;
  /** Opens (creating if needed) a KV bucket. */
  kv(bucket: string, opts?: KvOptions): Promise<KvStore>;
  status(): BusStatus;
  /** Calls `listener` on every status change; returns a function that removes it. */
  onStatus(listener: (status: BusStatus) => void): () => void;
  /** Resolves once connected; rejects with DBP_ERR_BUS_CONNECT_TIMEOUT after `timeoutMs`. */
  waitForConnection(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface KvEntry {
  readonly key: string;
  /** Per-bucket sequence, strictly increasing across all keys of the bucket. */
  readonly revision: number;
  /** Undefined when this revision deleted the key. */
  readonly value: Uint8Array | undefined;
  readonly created: Date;
}

export interface KvPutOptions {
  /** Compare-and-set: 0 means the key must not exist (or be deleted). */
  readonly expectedRevision?: number;
}

export interface KvStore {
  readonly bucket: string;
  /** The live value, or undefined when the key never existed or is deleted. */
  get(key: string): Promise<KvEntry | undefined>;
  /** Returns the new revision; a failed compare-and-set rejects with DBP_ERR_BUS_KV_REVISION_MISMATCH. */
  put(key: string, value: Uint8Array, opts?: KvPutOptions): Promise<number>;
  delete(key: string): Promise<void>;
  /** Live keys matching a pattern (`*`, `>`; default all), sorted. */
  keys(pattern?: string): Promise<string[]>;
  /**
   * Delivers the latest entry of every matching key (deletes included, value undefined) in
   * revision order, then every later change. After an outage it resumes from the last
   * revision it delivered, so the latest value is never lost and nothing is delivered twice.
   */
  watch(pattern: string, handler: (entry: KvEntry) => void | Promise<void>): Subscription;
}
