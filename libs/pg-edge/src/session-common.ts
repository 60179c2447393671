// What both modes do the same way: refuse a connection with an ErrorResponse, and serve a CancelRequest.
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import { encodeBackendMessages, type ErrorResponse } from '@dbproxy/protocol-pg';
import { sendCancelRequest } from './backend-socket';
import type { EdgeContext } from './edge-context';
import { readStartup } from './frontend-startup';

/** Sends the error (FATAL during startup) and closes once it is written. */
export function refuse(socket: Socket, error: ErrorResponse): void {
  if (socket.destroyed) return;
  socket.end(encodeBackendMessages(error));
  // read on (and drop) what the client still sends: its close is seen at once, and frees its admission slot
  socket.resume();
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * Refuses a connection before its startup: the SSLRequest is answered first (`N`, or TLS when
 * proxy.tls is configured), then the FATAL follows the StartupMessage, where every client prints
 * it (libpq answers an ErrorResponse to its SSLRequest with "server sent an error response during
 * SSL exchange" and nothing else). `sslPending`: the SSLRequest was read already. A CancelRequest
 * is served as usual.
 */
export async function refuseAtStartup(edge: EdgeContext, socket: Socket, error: ErrorResponse, deadlineMs: number, sslPending = false): Promise<void> {
  const outcome = await readStartup(socket, { tls: edge.tls, passthroughTls: false, deadlineMs, sslPending });
  if (outcome.kind === 'cancel') return handleCancel(edge, 'transparent', outcome.processId, outcome.secretKey, socket);
  const target = outcome.kind === 'failed' && outcome.error === undefined ? undefined : outcome.socket;
  if (target) refuse(target, error);
  else socket.destroy();
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
  edge.broadcastCancel(processId, secretKey);
  const forwarded = forwardToPassthroughBackends(edge, processId, secretKey);
  edge.metrics.cancelRequests.inc({ mode, outcome: forwarded ? 'passthrough' : 'broadcast' });
}

/** A key the backend issued itself (TLS passthrough): offered to the backends such sessions use. */
export function forwardToPassthroughBackends(edge: EdgeContext, processId: number, secretKey: number): boolean {
  const backends = edge.cancelKeys.passthroughBackends();
  for (const address of backends) void sendCancelRequest(address, processId, secretKey);
  return backends.length > 0;
}

/** The bus subject cancels travel on between pg-edge processes (workers and instances). */
export const CANCEL_SUBJECT = 'dbproxy.pgedge.cancel';

export function encodeCancel(processId: number, secretKey: number): Uint8Array {
  const payload = Buffer.alloc(8);
  payload.writeInt32BE(processId, 0);
  payload.writeInt32BE(secretKey, 4);
  return payload;
}

/** A cancel another process could not place: ours if the key is, else our passthrough backends'. */
export function receiveCancel(edge: EdgeContext, payload: Uint8Array): void {
  if (payload.length !== 8) return;
  const data = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const processId = data.readInt32BE(0);
  const secretKey = data.readInt32BE(4);
  if (edge.cancelKeys.cancel(processId, secretKey)) edge.metrics.cancelRequests.inc({ mode: 'any', outcome: 'forwarded_from_peer' });
  else forwardToPassthroughBackends(edge, processId, secretKey);
}
