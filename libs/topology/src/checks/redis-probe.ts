// Redis/Valkey health check: PING, ROLE and INFO replication (offsets, link state).
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { TopologyErrors } from '../errors';
import { splitAddress, type BackendTarget } from '../targets';
import { MonitorConnection } from './monitor-connection';
import { tlsOptions } from './tls';
import type { CheckResult, ObservedRole, ReplicaObservation } from './types';

/** `key:value` lines of an INFO section. */
export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) fields.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  return fields;
}

function roleOf(reply: unknown, label: string): ObservedRole {
  const kind = Array.isArray(reply) ? String(reply[0]) : '';
  if (kind === 'master') return 'primary';
  if (kind === 'slave') return 'replica';
  if (kind === 'sentinel') throw TopologyErrors.unexpectedReply('ROLE', label, 'a Sentinel is not a data node');
  throw TopologyErrors.unexpectedReply('ROLE', label, JSON.stringify(reply).slice(0, 200));
}

/** A replica's link to its primary; a replica whose link is down is as stale as the link is old. */
export function replicaFromInfo(info: Map<string, string>): ReplicaObservation {
  const linkUp = info.get('master_link_status') === 'up';
  const downFor = Number(info.get('master_link_down_since_seconds'));
  return { stopped: false, reportedLagSeconds: null, fallbackLagSeconds: linkUp ? 0 : Number.isFinite(downFor) && downFor >= 0 ? downFor : null };
}

function offsetOf(info: Map<string, string>, role: ObservedRole): string | null {
  const value = role === 'replica' ? info.get('slave_repl_offset') : info.get('master_repl_offset');
  return value !== undefined && /^-?\d+$/.test(value) ? value : null;
}

/** `-BUSY ...`: the server runs a script or function past busy-reply-threshold (lua-time-limit). */
function isBusy(err: unknown): boolean {
  return err instanceof Error && /^BUSY\s/.test(err.message);
}

export class RedisProbe extends MonitorConnection<Redis> {
  /** The last full observation, kept while the server answers BUSY. */
  private last: CheckResult | undefined;

  constructor(
    private readonly target: BackendTarget,
    private readonly connectAddress: string,
  ) {
    super(`redis backend ${target.name} (${connectAddress})`);
  }

  protected async open(timeoutMs: number): Promise<Redis> {
    const { host, port } = splitAddress(this.connectAddress);
    const tls = tlsOptions(this.target.tls, host);
    const redis = new Redis({
      host,
      port,
      ...(this.target.credentials.username ? { username: this.target.credentials.username } : {}),
      ...(this.target.credentials.password ? { password: this.target.credentials.password } : {}),
      ...(tls ? { tls: { ...tls } } : {}),
      lazyConnect: true,
      connectTimeout: timeoutMs,
      retryStrategy: () => null, // this class reconnects on the next check
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      enableReadyCheck: false,
      autoResubscribe: false,
    });
    redis.on('error', () => this.lost(redis));
    try {
      await redis.connect();
    } catch (err) {
      this.destroy(redis);
      throw err;
    }
    return redis;
  }

  protected destroy(redis: Redis): void {
    redis.disconnect();
    redis.stream?.destroy();
  }

  protected async inspect(redis: Redis): Promise<CheckResult> {
    const started = performance.now();
    try {
      const result = await this.observe(redis, started);
      this.last = result;
      return result;
    } catch (err) {
      if (!isBusy(err)) throw err;
      // A script or function running past busy-reply-threshold: the server is alive (it answered),
      // it only cannot run PING/ROLE/INFO until the script ends or SCRIPT KILL stops it.
      const latencyMs = performance.now() - started;
      return { ...(this.last ?? { roleObserved: 'unknown', position: null, progress: null, replica: null }), ok: true, latencyMs, checkedAt: Date.now() };
    }
  }

  private async observe(redis: Redis, started: number): Promise<CheckResult> {
    await redis.ping();
    const latencyMs = performance.now() - started;
    const role = roleOf(await redis.call('ROLE'), this.target.name);
    const info = parseInfo(await redis.info('replication'));
    const position = offsetOf(info, role);
    return {
      ok: true,
      latencyMs,
      roleObserved: role,
      position,
      progress: position === null ? null : BigInt(position),
      replica: role === 'replica' ? replicaFromInfo(info) : null,
      checkedAt: Date.now(),
    };
  }
}
