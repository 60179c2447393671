// Names of the node:diagnostics_channel channels libraries publish telemetry on;
// libs/observability subscribes to them. One constants object, so names never drift.
export const Channels = {
  /** A connection state machine changed state: { kind, id, from, to, reason }. */
  stateTransition: 'dbproxy:state-transition',
  /** A bus message failed validation and was dropped: { subject, reason }. */
  busMessageDropped: 'dbproxy:bus-message-dropped',
  /** A signed bus message failed sender verification and was refused: { subject, kind, reason, detail }. */
  busMessageRejected: 'dbproxy:bus-message-rejected',
  /** The SQL classification cache answered: { hit: boolean }. */
  sqlCacheLookup: 'dbproxy:sql-cache-lookup',
  /** A pool event: { pool, event, waitMs? }. */
  poolEvent: 'dbproxy:pool-event',
  /** What operators read at info level (sessions, failed logins, backend health): see operational-events.ts. */
  operationalEvent: 'dbproxy:operational-event',
} as const;

export type ChannelName = (typeof Channels)[keyof typeof Channels];
