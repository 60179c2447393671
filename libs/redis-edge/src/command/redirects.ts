// Redis Cluster redirects, followed for the client: MOVED (route patched, topology asked to
// refresh), ASK (ASKING then the command, on the importing node), TRYAGAIN and CLUSTERDOWN (the
// same node again after 2, 4, ... 64 ms). The client never sees a redirect.
import type { Redirect } from '@dbproxy/resp';
import { RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import type { ReplySink, SentFrame } from '../io/reply-sink';
import { SendFlag } from '../io/reply-sink';
import type { CommandEdge } from './command-edge';
import type { EndpointRoute } from './link-directory';

/** MOVED/ASK hops for one command before the client gets -TRYAGAIN. */
export const MAX_REDIRECTS = 5;
/** TRYAGAIN/CLUSTERDOWN retries (2 ms doubling: about 126 ms in all) before the error reaches the client. */
export const MAX_RETRIES = 6;

export interface RedirectHost {
  readonly closed: boolean;
  readonly edge: CommandEdge;
  resend(owner: ReplySink, seq: number, part: number, route: EndpointRoute, asking: boolean, frame: SentFrame, flags: number, attempt: number): void;
}

/** `host:port` of a redirect target; an empty host means the node that answered. */
export function addressOf(redirect: { host: string; port: number }, via: BackendLink): string {
  const host = redirect.host === '' ? via.endpoint.address.slice(0, via.endpoint.address.lastIndexOf(':')) : redirect.host;
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${redirect.port}` : `${host}:${redirect.port}`;
}

/** Handles a redirect or retry error for (seq, part) of `owner`; false: deliver the error as it is. */
export function followRedirect(host: RedirectHost, owner: ReplySink, seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
  if (host.closed) return true;
  const attempt = frame.attempt + 1;
  const metrics = host.edge.metrics;
  if (redirect.kind === 'moved' || redirect.kind === 'ask') {
    if (attempt > MAX_REDIRECTS) {
      owner.fail(seq, part, RedisEdgeErrors.redirectLimit(redirect.slot));
      return true;
    }
    metrics.redirects.inc({ kind: redirect.kind });
    host.edge.tracer.startSpan(`redis ${redirect.kind}`, { attributes: { 'db.system.name': 'redis', 'dbproxy.slot': redirect.slot, 'server.address': addressOf(redirect, via) } }).end();
    const address = addressOf(redirect, via);
    const route = redirect.kind === 'moved' ? host.edge.noteMoved(redirect.slot, address) : host.edge.routeAt(address);
    host.resend(owner, seq, part, route, redirect.kind === 'ask', frame, flags, attempt);
    return true;
  }
  if (attempt > MAX_RETRIES) return false;
  metrics.retries.inc({ reason: redirect.kind });
  if (redirect.kind === 'clusterdown') void host.edge.noteClusterDown();
  const route = host.edge.links.route(via.endpoint);
  const asked = (flags & SendFlag.Asked) !== 0;
  setTimeout(() => {
    if (!host.closed) host.resend(owner, seq, part, route, asked, frame, flags, attempt);
  }, 2 << (attempt - 1)).unref();
  return true;
}
