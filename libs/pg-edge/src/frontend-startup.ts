// The startup phase of a client connection, shared by both modes: SSLRequest (terminate, refuse or
// pass through), GSSENCRequest (refused), CancelRequest, and the StartupMessage itself.
import { Buffer } from 'node:buffer';
import type { Socket } from 'node:net';
import {
  decodeStartupPacket,
  EncryptionResponseCode,
  PgFramer,
  type Frame,
  type StartupMessage,
} from '@dbproxy/protocol-pg';
import type { FrontendTls } from '@dbproxy/runtime';
import { acceptTls } from './frontend-tls';
import { PgEdgeErrors } from './errors';

export interface StartupPolicy {
  readonly tls: FrontendTls;
  /** Hand SSLRequest to the caller (transparent mode without sharding passes TLS through). */
  readonly passthroughTls: boolean;
  readonly deadlineMs: number;
  /** The client's SSLRequest was read already (a refused TLS passthrough): answer it first. */
  readonly sslPending?: boolean;
}

export type StartupOutcome =
  | { readonly kind: 'startup'; readonly socket: Socket; readonly message: StartupMessage; readonly tls: boolean; readonly remainder: Buffer }
  | { readonly kind: 'cancel'; readonly processId: number; readonly secretKey: number }
  | { readonly kind: 'ssl-passthrough'; readonly socket: Socket; readonly request: Buffer }
  | { readonly kind: 'failed'; readonly socket: Socket; readonly error: Error | undefined };

/** Framing errors PostgreSQL answers by closing silently ("invalid length of startup packet"). */
const SILENT_FAILURES = new Set(['DBP_ERR_PG_INVALID_LENGTH', 'DBP_ERR_PG_MESSAGE_TOO_LARGE']);
const REFUSE = Buffer.from([EncryptionResponseCode.Refuse]);
const ACCEPT = Buffer.from([EncryptionResponseCode.Accept]);

/** Reads packets until a StartupMessage, a CancelRequest or a passthrough SSLRequest. */
export function readStartup(client: Socket, policy: StartupPolicy): Promise<StartupOutcome> {
  return new Promise<StartupOutcome>((resolve) => {
    let socket = client;
    let tls = false;
    let framer = new PgFramer({ phase: 'startup', peer: 'frontend' });
    let settled = false;
    const timer = setTimeout(() => finish({ kind: 'failed', socket, error: PgEdgeErrors.loginTimeout(Math.round(policy.deadlineMs / 1000)) }), policy.deadlineMs);
    const finish = (outcome: StartupOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('data', onData).off('close', onClose).off('error', onClose).off('end', onClose);
      socket.pause();
      resolve(outcome);
    };
    const onClose = () => finish({ kind: 'failed', socket, error: undefined });
    const onFrame = (frame: Frame) => {
      const packet = decodeStartupPacket(frame);
      switch (packet.type) {
        case 'CancelRequest':
          return finish({ kind: 'cancel', processId: packet.processId, secretKey: packet.secretKey });
        case 'GSSENCRequest':
          socket.write(REFUSE);
          return;
        case 'SSLRequest':
          return onSslRequest(frame);
        case 'StartupMessage':
          framer.stop();
          return finish({ kind: 'startup', socket, message: packet, tls, remainder: Buffer.from(framer.takeRemainder()) });
      }
    };
    const onSslRequest = (frame: Frame | undefined) => {
      if (tls) throw PgEdgeErrors.protocol('SSLRequest inside TLS');
      if (policy.passthroughTls && frame) return finish({ kind: 'ssl-passthrough', socket, request: Buffer.from(frame.bytes) });
      const context = policy.tls.context;
      if (!context) {
        socket.write(REFUSE);
        return;
      }
      socket.off('data', onData);
      socket.write(ACCEPT);
      acceptTls(socket, context, policy.deadlineMs).then(
        (secure) => {
          if (settled) return secure.destroy();
          socket.off('close', onClose).off('error', onClose).off('end', onClose);
          socket = secure;
          tls = true;
          framer = new PgFramer({ phase: 'startup', peer: 'frontend' });
          secure.on('data', onData).once('close', onClose).once('error', onClose).once('end', onClose);
        },
        (err: Error) => finish({ kind: 'failed', socket, error: err }),
      );
    };
    const onData = (chunk: Buffer) => {
      try {
        framer.push(chunk, onFrame);
      } catch (err) {
        // PostgreSQL closes without a word on a startup packet of impossible length (it only logs it)
        if (SILENT_FAILURES.has((err as { code?: string }).code ?? '')) return finish({ kind: 'failed', socket, error: undefined });
        finish({ kind: 'failed', socket, error: err instanceof Error ? err : new Error(String(err)) });
      }
    };
    // a client that ends its side before a whole startup packet (a partial header) is gone: close at once
    socket.on('data', onData).once('close', onClose).once('error', onClose).once('end', onClose);
    if (policy.sslPending) onSslRequest(undefined);
    // A socket paused by an earlier phase (a refused TLS passthrough) does not resume on its own.
    socket.resume();
  });
}
