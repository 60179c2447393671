// Typed publish/subscribe/request/serve over any Bus: payloads are encoded from the catalogue's
// schemas, and received messages are validated; malformed ones are reported and dropped,
// never handed to the handler.
import type { z } from 'zod';
import { markReported, reportDropped } from '../diagnostics';
import { BusErrors } from '../errors';
import { ReplayGuard } from '../identity/bus-identities';
import { replyPurpose, sealOutgoing, verifyIncoming } from '../identity/signed-delivery';
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
  const subject = spec.subject.fill(params);
  bus.publish(subject, sealOutgoing(bus, spec.signed, subject, encodeMessage(spec, payload), spec.name).data, headers);
}

export function subscribeMessages<T extends string, S extends z.ZodTypeAny>(
  bus: Bus,
  pattern: SubjectPattern<T, S>,
  handler: (payload: z.output<S>, meta: MessageMeta<T>) => void | Promise<void>,
): Subscription {
  const { spec } = pattern;
  const guard = new ReplayGuard();
  return bus.subscribe(pattern.pattern, (msg) => {
    const decoded = decodeMessage(spec, msg.data);
    const params = spec.subject.parse(msg.subject);
    if (!decoded.ok) return reportDropped(msg.subject, decoded.reason, decoded.detail);
    if (!params) return reportDropped(msg.subject, 'schema-mismatch', `${spec.name}: subject does not fit ${spec.subject.template}`);
    if (!verifyIncoming(bus, spec.signed, msg.subject, msg.subject, msg.data, { checkAge: true, guard }).ok) return;
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
  const sealed = sealOutgoing(bus, spec.signed, subject, encodeMessage(spec, payload), spec.name);
  const reply = await bus.request(subject, sealed.data, opts);
  const decoded = decodeMessage({ name: `${spec.name} reply`, ...spec.reply }, reply.data);
  if (!decoded.ok) {
    reportDropped(subject, decoded.reason, decoded.detail);
    throw BusErrors.malformedMessage(subject, decoded.detail);
  }
  const purpose = replyPurpose(subject, sealed.nonce ?? '');
  const receipt = verifyIncoming(bus, spec.reply.signed, subject, purpose, reply.data, { checkAge: true });
  if (!receipt.ok) throw BusErrors.unauthenticated(`${subject} (reply)`, receipt.detail);
  return decoded.value;
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
  const guard = new ReplayGuard();
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
      const receipt = verifyIncoming(bus, spec.signed, msg.subject, msg.subject, msg.data, { checkAge: true, guard });
      if (!receipt.ok) throw markReported(BusErrors.unauthenticated(msg.subject, receipt.detail));
      const reply = encodeMessage(replySpec, await handler(decoded.value, { subject: msg.subject, params, headers: msg.headers }));
      return sealOutgoing(bus, spec.reply.signed, replyPurpose(msg.subject, receipt.nonce ?? ''), reply, replySpec.name).data;
    },
    opts,
  );
}
