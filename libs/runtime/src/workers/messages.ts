// Messages between an edge's primary process and its worker processes (IPC, JSON + handles).

/** primary → worker: serve this socket (sent with the socket handle). */
export interface ConnectionMessage {
  readonly type: 'dbproxy:connection';
  readonly listener: string;
}

/** worker → primary: a connection it served, admitted by `listener`, has closed. */
export interface ClosedMessage {
  readonly type: 'dbproxy:closed';
  readonly listener: string;
}

/** primary → worker: answer with what `topic`'s provider returns. */
export interface GatherRequest {
  readonly type: 'dbproxy:gather';
  readonly id: number;
  readonly topic: string;
  /** Handed to the provider (e.g. which session to kill). */
  readonly arg?: unknown;
}

/** worker → primary. */
export interface GatherReply {
  readonly type: 'dbproxy:gathered';
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

/** primary → worker: stop accepting, drain until `deadline`, close and exit. */
export interface DrainMessage {
  readonly type: 'dbproxy:drain';
  readonly deadline: number;
}

/** worker → primary: started and ready for connections. */
export interface ReadyMessage {
  readonly type: 'dbproxy:worker-ready';
}

export type WorkerMessage = ConnectionMessage | ClosedMessage | GatherRequest | GatherReply | DrainMessage | ReadyMessage;

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return value !== null && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string' && (value as { type: string }).type.startsWith('dbproxy:');
}
