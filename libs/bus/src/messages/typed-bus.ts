// Typed publish/subscribe/request/serve over any Bus: payloads are encoded from the catalogue's
// schemas, and received messages are validated; malformed ones are reported and dropped,
// never handed to the handler.
import type { z } from 'zod';
import { markReported, reportDropped } from '../diagnostics';
import { BusErrors } from '../errors';
import type { Bus, BusHeaders, Subscription } from '../types';
import { decodeMessage, encodeMessage } from './codec';
import type { MessageSpec, RequestPattern, RequestSpec, SubjectPattern, TemplateParams } from './spec';

/** What a typed handler learns besides the payload. */
export interface MessageMeta<T extends string> {
  readonly subject: string;
  /** Parameters read back from the subject, e.g. `{ protocol, backend }`. */
  readonly params: TemplateParams<T>;
  readonly headers: BusHeaders;
}

export function publishMessage<T extends string, S extends z.ZodTypeAny>(
  bus: Bus,
  spec: MessageSpec<T, S>,
  params: TemplateParams<T>,
  payload: z.input<S>,
  headers?: Record<string, string>,
): void {
  bus.publish(spec.subject.fill(params), encodeMessage(spec, payload), headers);
}

export function subscribeMessages<T extends string, S extends z.ZodTypeAny>(
  bus: Bus,
  pattern: SubjectPattern<T, S>,
  handler: (payload: z.output<S>, meta: MessageMeta<T>) => void | Promise<void>,
): Subscription {
  const { spec } = pattern;
  return bus.subscribe(pattern.pattern, (msg) => {
    const decoded = decodeMessage(spec, msg.data);
    const params = spec.subject.parse(msg.subject);
    if (!decoded.ok) return reportDropped(msg.subject, decoded.reason, decoded.detail);
    if (!params) return reportDropped(msg.subject, 'schema-mismatch', `${spec.name}: subject does not fit ${spec.subject.template}`);
    return handler(decoded.value, { subject: msg.subject, params, headers: msg.headers });
  });
}

export async function requestMessage<T extends string, Q extends z.ZodTypeAny, R extends z.ZodTypeAny>(
  bus: Bus,
  spec: RequestSpec<T, Q, R>,
  params: TemplateParams<T>,
  payload: z.input<Q>,
  opts: { timeoutMs: number; headers?: Record<string, string> },
): Promise<z.output<R>> {
  const subject = spec.subject.fill(params);
  const reply = await bus.request(subject, encodeMessage(spec, payload), opts);
  const decoded = decodeMessage({ name: `${spec.name} reply`, ...spec.reply }, reply.data);
  if (decoded.ok) return decoded.value;
  reportDropped(subject, decoded.reason, decoded.detail);
  throw BusErrors.malformedMessage(subject, decoded.detail);
}

/**
 * Answers typed requests. A malformed request is reported and answered with a
 * DBP_ERR_BUS_MALFORMED_MESSAGE error reply without calling the handler; a handler error or
 * an invalid reply becomes an error reply too.
 */
export function serveMessages<T extends string, Q extends z.ZodTypeAny, R extends z.ZodTypeAny>(
  bus: Bus,
  pattern: RequestPattern<T, Q, R>,
  handler: (request: z.output<Q>, meta: MessageMeta<T>) => Promise<z.input<R>>,
  opts?: { queue?: string },
): Subscription {
  const { spec } = pattern;
  const replySpec = { name: `${spec.name} reply`, ...spec.reply };
  return bus.serve(
    pattern.pattern,
    async (msg) => {
      const decoded = decodeMessage(spec, msg.data);
      const params = spec.subject.parse(msg.subject);
      if (!decoded.ok || !params) {
        const reason = decoded.ok ? 'schema-mismatch' : decoded.reason;
        const detail = decoded.ok ? `subject does not fit ${spec.subject.template}` : decoded.detail;
        reportDropped(msg.subject, reason, detail);
        throw markReported(BusErrors.malformedMessage(msg.subject, detail));
      }
      return encodeMessage(replySpec, await handler(decoded.value, { subject: msg.subject, params, headers: msg.headers }));
    },
    opts,
  );
}
