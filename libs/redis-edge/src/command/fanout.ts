// Commands over several shards: multi-key commands split per shard (per slot on a cluster) and
// keyless cluster-wide commands sent to every shard, their replies merged by COMMAND INFO's
// response policy. Cross-shard writes run only with redis.cross_shard_writes, never atomically.
import { SpanKind, type Span } from '@opentelemetry/api';
import { encodeCommand, type CommandBatch, type Redirect } from '@dbproxy/resp';
import { errorReply, logIfInternal, RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import { SendFlag, type ReplySink, type SentFrame } from '../io/reply-sink';
import { CommandFlag } from './command-flags';
import type { CommandSpec } from './command-table';
import { commandType, countCommand, SEVERAL_BACKENDS } from './counting';
import type { EndpointRoute } from './link-directory';
import { Merge, MERGE_NAMES, mergeReplies, multiKeyMerge, RESPONSE_MERGE } from './merge';
import { followOrSplit } from './key-by-key';
import { UNMAPPED } from './route-table';
import type { CommandSession } from './session';

/** The replies of one client command's parts, completed at the command's sequence when all are in. */
export class Fanout implements ReplySink {
  private readonly replies: Buffer[];
  private left: number;
  private readonly span: Span;

  constructor(
    private readonly session: CommandSession,
    private readonly merge: number,
    parts: number,
    private readonly keyOrder?: readonly (readonly number[])[],
    private readonly keyCount = 0,
    command = '',
    /** Slots gated on the session until every part is in (cluster; empty elsewhere). */
    private readonly gated: readonly number[] = [],
  ) {
    this.replies = new Array<Buffer>(parts);
    this.left = parts;
    for (const g of gated) session.gates.open(g);
    this.span = session.edge.tracer.startSpan('redis fanout', { kind: SpanKind.INTERNAL, attributes: { 'db.system.name': 'redis', 'db.operation.name': command, 'dbproxy.merge': MERGE_NAMES[merge], 'dbproxy.parts': parts } }, session.spans?.context());
  }

  deliver(seq: number, part: number, buf: Buffer, start: number, end: number): void {
    this.replies[part] = buf.subarray(start, end);
    if (--this.left > 0) return;
    for (const g of this.gated) this.session.gates.close(g);
    this.span.end();
    this.session.complete(seq, mergeReplies(this.merge, this.replies, this.keyOrder, this.keyCount));
  }

  fail(seq: number, part: number, err: Error): void {
    logIfInternal(this.session.edge.logger, err, { listener: this.session.listener });
    const reply = errorReply(err);
    this.deliver(seq, part, reply, 0, reply.length);
  }

  redirect(seq: number, part: number, redirect: Redirect, frame: SentFrame, flags: number, via: BackendLink): boolean {
    return followOrSplit(this.session, this, seq, part, redirect, frame, flags, via);
  }
}


function sendParts(s: CommandSession, spec: CommandSpec, fanout: Fanout, merge: number, targets: readonly EndpointRoute[], frames: readonly Buffer[]): void {
  const seq = s.ring.reserve();
  s.ring.time(seq, s.edge.metrics.latency.series(s.listener, commandType(spec), SEVERAL_BACKENDS).statement);
  const flags = s.edge.routes.cluster ? SendFlag.Redirectable : 0;
  s.edge.metrics.fanouts.inc({ policy: MERGE_NAMES[merge] });
  targets.forEach((route, p) => {
    const frame = frames[p] ?? frames[0];
    countCommand(route, spec);
    s.linkFor(route).send(fanout, seq, p, flags, 0, frame, 0, frame.length);
  });
}

/** A multi_shard command (MGET, MSET, DEL, EXISTS, ...) whose keys are on several shards or slots. */
export function splitByGroup(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  const keys = s.keys;
  const routes = s.edge.routes;
  const src = batch.source(i);
  const groups: number[] = [];
  const members: number[][] = [];
  for (let k = 0; k < keys.count; k++) {
    const at = keys.positions[k];
    const group = routes.groupOfKey(src, batch.offset(i, at), batch.length(i, at));
    if (group === UNMAPPED) return s.replyError(RedisEdgeErrors.keyUnmapped(), 'unmapped_key');
    const g = groups.indexOf(group);
    if (g >= 0) members[g].push(k);
    else {
      groups.push(group);
      members.push([k]);
    }
  }
  if (spec.name === 'msetnx') return s.replyError(RedisEdgeErrors.crossShardMsetnx(), 'cross_shard_msetnx');
  if (!s.gates.empty && s.gates.blocksAny(groups)) return s.retryAfterDrain();
  if ((spec.flags & CommandFlag.Write) !== 0 && !s.edge.settings.crossShardWrites) return s.replyError(RedisEdgeErrors.crossShardWrite(spec.display), 'cross_shard_write');
  const targets = groups.map((g) => s.routeOfGroup(g));
  const missing = targets.findIndex((t) => t === undefined);
  if (missing >= 0) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', routes.nameOfGroup(groups[missing])));
  const step = spec.keys.step;
  const argc = batch.argCount[i];
  const prefix = batch.args(i).slice(0, keys.positions[0]);
  const suffix = batch.args(i).slice(keys.positions[keys.count - 1] + step, argc);
  const frames = members.map((ks) => encodeCommand([...prefix, ...ks.flatMap((k) => batch.args(i).slice(keys.positions[k], keys.positions[k] + step)), ...suffix]));
  const merge = multiKeyMerge(spec);
  sendParts(s, spec, new Fanout(s, merge, frames.length, members, keys.count, spec.display, routes.cluster ? groups : []), merge, targets as EndpointRoute[], frames);
}

/** A keyless command with request_policy all_shards / all_nodes (DBSIZE, KEYS, FLUSHALL, SCRIPT LOAD, ...). */
export function fanOutAll(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  if (!s.gates.empty) return s.retryAfterDrain();
  const targets = s.allShards();
  if (targets.some((t) => t === undefined)) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', s.edge.routes.missingShard(targets)));
  const unique = [...new Set(targets as EndpointRoute[])];
  const merge = spec.name === 'randomkey' ? Merge.AnyNonNull : (RESPONSE_MERGE[spec.responsePolicy] ?? Merge.Collect);
  const frame = batch.buffer.subarray(batch.frameStart[i], batch.frameEnd[i]);
  sendParts(s, spec, new Fanout(s, merge, unique.length, undefined, 0, spec.display), merge, unique, [frame]);
}
