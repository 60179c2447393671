// Invokes subscriber and server handlers the same way on both buses: inside the message's trace
// context, with every exception and rejection caught and reported, never propagated.
import { reportDropped, wasReported } from './diagnostics';
import { inTraceContext } from './trace';
import type { BusMessage, MessageHandler, RequestHandler } from './types';
import { errorCode, errorMessage } from '@dbproxy/util';

/** Header names carrying an error reply from `serve`. */
export const ErrorReplyHeaders = {
  code: 'Dbp-Error-Code',
  message: 'Dbp-Error-Message',
} as const;

/** Routes a handler's asynchronous failure to `onError`; sync results need nothing. */
export function settle(result: void | PromiseLike<void>, onError: (err: unknown) => void): void {
  if (result && typeof result.then === 'function') result.then(undefined, onError);
}

export function deliverMessage(handler: MessageHandler, msg: BusMessage): void {
  const onError = (err: unknown): void => {
    if (!wasReported(err)) reportDropped(msg.subject, 'handler-error', err);
  };
  inTraceContext(msg.headers, () => {
    try {
      settle(handler(msg), onError);
    } catch (err) {
      onError(err);
    }
  });
}

export interface Reply {
  readonly data: Uint8Array;
  readonly headers: Record<string, string> | undefined;
}

/** Runs a serve handler; resolves to the reply to send, an error reply when the handler fails. */
export function answerRequest(handler: RequestHandler, msg: BusMessage): Promise<Reply> {
  return inTraceContext(msg.headers, async () => {
    try {
      return { data: await handler(msg), headers: undefined };
    } catch (err) {
      if (!wasReported(err)) reportDropped(msg.subject, 'handler-error', err);
      return { data: new Uint8Array(0), headers: errorReplyHeaders(err) };
    }
  });
}

function errorReplyHeaders(err: unknown): Record<string, string> {
  // Header values cannot carry line breaks.
  const message = errorMessage(err).replace(/[\r\n]+/g, ' ').slice(0, 1024);
  return { [ErrorReplyHeaders.code]: errorCode(err) ?? 'DBP_ERR_UNKNOWN', [ErrorReplyHeaders.message]: message };
}
