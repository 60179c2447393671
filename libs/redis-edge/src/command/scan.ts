// SCAN across every shard with one composite cursor: node cursor × 1024 + node index. A node's
// scan that ends moves on to the next node; the last one ends the whole scan with cursor 0.
import { Buffer } from 'node:buffer';
import { aggregateElements, encodeBulk, encodeCommand, ReplyScanner, type CommandBatch, type Redirect } from '@dbproxy/resp';
import { errorReply, logIfInternal, RedisEdgeErrors } from '../errors';
import type { BackendLink } from '../io/backend-link';
import type { ReplySink, SentFrame } from '../io/reply-sink';
import type { CommandSpec } from './command-table';
import { countCommand } from './counting';
import { toRoute } from './dispatcher';
import type { EndpointRoute } from './link-directory';
import type { CommandSession } from './session';

/** Shard indexes fit below this (the cursor's low bits). */
export const NODE_SLOTS = 1024n;
const DECIMAL = /^[0-9]{1,40}$/;

class ScanSink implements ReplySink {
  constructor(
    private readonly session: CommandSession,
    private readonly index: number,
    private readonly nodes: number,
  ) {}

  deliver(seq: number, _part: number, buf: Buffer, start: number, end: number): void {
    const reply = buf.subarray(start, end);
    const elements = reply[0] === 0x2a ? aggregateElements(reply, 0, reply.length, new ReplyScanner()) : undefined;
    if (!elements || elements.count !== 2) return this.session.complete(seq, reply);
    const cursorFrame = elements.frame(0);
    const keys = elements.frame(1);
    const text = cursorFrame.toString('latin1', cursorFrame.indexOf('\n') + 1, cursorFrame.length - 2);
    const next = DECIMAL.test(text) ? BigInt(text) : 0n;
    const more = this.index + 1 < this.nodes;
    const composite = next !== 0n ? next * NODE_SLOTS + BigInt(this.index) : more ? BigInt(this.index + 1) : 0n;
    this.session.complete(seq, Buffer.concat([Buffer.from('*2\r\n'), encodeBulk(composite.toString()), keys]));
  }

  fail(seq: number, _part: number, err: Error): void {
    logIfInternal(this.session.edge.logger, err, { listener: this.session.listener });
    this.session.complete(seq, errorReply(err));
  }

  redirect(_seq: number, _part: number, _redirect: Redirect, _frame: SentFrame, _flags: number, _via: BackendLink): boolean {
    return false;
  }
}

export function scanCommand(s: CommandSession, batch: CommandBatch, i: number, spec: CommandSpec): void {
  if (!s.gates.empty) return s.retryAfterDrain();
  const nodes = [...new Set(s.allShards())];
  if (nodes.length <= 1) return toRoute(s, batch, i, spec, nodes[0]);
  if (nodes.some((n) => n === undefined)) return s.replyError(RedisEdgeErrors.noBackend(s.readOnly ? 'replica' : 'primary', s.edge.routes.missingShard(s.allShards())));
  if (batch.argCount[i] < 2) return s.replyError(RedisEdgeErrors.wrongArguments('scan'));
  const text = batch.argToString(i, 1, 'latin1');
  if (!DECIMAL.test(text)) return s.replyError(RedisEdgeErrors.invalidCursor());
  const cursor = BigInt(text);
  const index = Number(cursor % NODE_SLOTS);
  if (index >= nodes.length) return s.replyError(RedisEdgeErrors.invalidCursor());
  const route = nodes[index] as EndpointRoute;
  const frame = encodeCommand(['SCAN', (cursor / NODE_SLOTS).toString(), ...batch.args(i).slice(2)]);
  countCommand(route, spec);
  s.linkFor(route).send(new ScanSink(s, index, nodes.length), s.ring.reserve(), 0, 0, 0, frame, 0, frame.length);
}
