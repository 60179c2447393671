// What both modes do the same way: refuse a connection with an ErrorResponse, and serve a CancelRequest.
import type { Socket } from 'node:net';
import { encodeBackendMessages, type ErrorResponse } from '@dbproxy/protocol-pg';
import { sendCancelRequest } from './backend-socket';
import type { EdgeContext } from './edge-context';

/** Sends the error (FATAL during startup) and closes once it is written. */
export function refuse(socket: Socket, error: ErrorResponse): void {
  if (socket.destroyed) return;
  socket.end(encodeBackendMessages(error));
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * A CancelRequest: our own keys name a session of this process; any other key may belong to a
 * TLS-passthrough session (whose key came from the backend itself), so it goes to those backends.
 */
export function handleCancel(edge: EdgeContext, mode: 'transparent' | 'transaction', processId: number, secretKey: number, socket: Socket): void {
  socket.destroy();
  if (edge.cancelKeys.cancel(processId, secretKey)) {
    edge.metrics.cancelRequests.inc({ mode, outcome: 'forwarded' });
    return;
  }
  const backends = edge.cancelKeys.passthroughBackends();
  for (const address of backends) void sendCancelRequest(address, processId, secretKey);
  edge.metrics.cancelRequests.inc({ mode, outcome: backends.length > 0 ? 'passthrough' : 'unknown_key' });
}
