// The backend's one-byte answer to an SSLRequest a TLS-passthrough session forwarded.
import type { Socket } from 'node:net';
import { errorMessage } from '@dbproxy/util';
import { PgEdgeErrors } from '../errors';

/** The first bytes the backend sends after the SSLRequest; rejects when it closes, errs or says nothing for `timeoutMs`. */
export function sslAnswer(backend: Socket, name: string, timeoutMs: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const settle = (error: Error | undefined, answer?: Buffer) => {
      clearTimeout(timer);
      backend.off('data', onData);
      backend.off('close', onClose);
      backend.off('error', onError);
      if (error) reject(error);
      else resolve(answer as Buffer);
    };
    const onData = (chunk: Buffer) => settle(undefined, chunk);
    const onClose = () => settle(PgEdgeErrors.backendTls(name, 'the backend closed the connection after the SSLRequest'));
    const onError = (err: Error) => settle(PgEdgeErrors.backendTls.withCause(err, name, errorMessage(err)));
    const timer = setTimeout(() => settle(PgEdgeErrors.backendTls(name, `no answer to the SSLRequest within ${timeoutMs / 1000} s`)), timeoutMs);
    backend.on('data', onData);
    backend.once('close', onClose);
    backend.once('error', onError);
  });
}
