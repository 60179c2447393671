// SCRIPT KILL and FUNCTION KILL: on connections of their own to every shard, since the script they
// stop may be running on a shared connection, which the server does not read until it ends.
import type { CommandBatch, Redirect } from '@dbproxy/resp';
import { RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import type { ReplySink } from '../io/reply-sink';
import type { CommandSpec } from './command-table';
import { countCommand } from './counting';
import { Fanout } from './fanout';
import type { EndpointRoute } from './link-directory';
import { Merge } from './merge';
import type { CommandSession } from './session';

/** One leased connection carrying one kill: given back once its reply arrived. */
class KillSink implements ReplySink {
  constructor(
    private readonly s: CommandSession,
    private readonly link: BackendLink,
    private readonly inner: ReplySink,
  ) {}

  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    this.s.edge.links.release(this.link, true);
    this.inner.deliver(seq, part, buf, start, end);
  }

  fail(seq: number, part: number, err: Error): void {
    this.s.edge.links.release(this.link, false);
    this.inner.fail(seq, part, err);
  }

  redirect(_seq: number, _part: number, _redirect: Redirect): boolean {
    return false;
  }
}

/**
 * Sent at once (not behind the session's owed replies: its own EVAL may be what it stops), on a
 * leased connection to each shard's node; `+OK` when one shard stopped a script (one_succeeded).
 */
export function killCommand(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  const targets = s.allShards();
  const missing = targets.findIndex((t) => t === undefined);
  if (missing >= 0) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', s.edge.routes.shardName(missing)));
  const unique = [...new Set(targets as EndpointRoute[])];
  const seq = s.ring.reserve();
  const sink: ReplySink = unique.length === 1 ? s : new Fanout(s, Merge.OneSucceeded, unique.length, undefined, 0, spec.display);
  unique.forEach((route, p) => {
    const part = unique.length === 1 ? -1 : p;
    const link = s.edge.links.lease(route.endpoint, s.state);
    if (link instanceof Error) return sink.fail(seq, part, link);
    countCommand(route, spec);
    link.send(new KillSink(s, link, sink), seq, part, 0, 0, batch.buffer, batch.frameStart[i], batch.frameEnd[i]);
  });
}
