// SCRIPT KILL and FUNCTION KILL: on fresh connections of their own to every shard (set up with
// allow-busy commands only), since the script they stop may be running on a shared connection,
// which the server does not read until it ends.
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

/** One connection carrying one kill: closed once its reply arrived. */
class KillSink implements ReplySink {
  constructor(
    private readonly link: BackendLink,
    private readonly inner: ReplySink,
  ) {}

  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    this.inner.deliver(seq, part, buf, start, end);
    this.link.close(RedisEdgeErrors.backendLost(this.link.endpoint.address, 'kill sent'), 'kill sent');
  }

  fail(seq: number, part: number, err: Error): void {
    this.inner.fail(seq, part, err);
  }

  redirect(_seq: number, _part: number, _redirect: Redirect): boolean {
    return false;
  }
}

/**
 * Sent at once (not behind the session's owed replies: its own EVAL may be what it stops), on a
 * fresh connection to each shard's node (bounded by the connect and command timeouts); `+OK` when
 * one shard stopped a script (one_succeeded).
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
    const link = s.edge.links.openForKill(route.endpoint, s.state);
    countCommand(route, spec);
    link.send(new KillSink(link, sink), seq, part, 0, 0, batch.buffer, batch.frameStart[i], batch.frameEnd[i]);
  });
}
