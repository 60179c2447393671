// Human summaries: what a configuration contains, and which keys changed between two documents.
import type { DeepReadonly } from './snapshot';
import type { DbproxyConfig } from './schema/root';

interface Backend {
  readonly name: string;
  readonly role: string;
  readonly shard: string;
}

function describeBackends(backends: readonly Backend[]): string {
  const shards = new Set(backends.map((b) => b.shard));
  const replicas = backends.filter((b) => b.role === 'replica').length;
  return `${backends.length} backend(s) in ${shards.size} shard(s), ${replicas} replica(s)`;
}

/** One line per protocol and control section, for `dbproxy validate` and logs. */
export function summarizeConfig(c: DeepReadonly<DbproxyConfig>): string[] {
  const state = (on: boolean) => (on ? 'enabled' : 'disabled');
  const lines = [
    `mysql: ${state(c.mysql.enabled)}, ${describeBackends(c.mysql_backends)}, listeners ${c.mysql.read_write_listen} / ${c.mysql.read_only_listen}`,
    `postgres: ${state(c.postgres.enabled)} (${c.postgres.routing_mode}), ${describeBackends(c.postgres_backends)}, listeners ${c.postgres.read_write_listen} / ${c.postgres.read_only_listen}`,
    `redis: ${state(c.redis.enabled)} (${c.redis.mode}${c.redis.cluster.enabled ? ', cluster' : ''}), ${describeBackends(c.redis_backends)}, listeners ${c.redis.read_write_listen} / ${c.redis.read_only_listen}`,
    `users: ${c.users.length}; config-api: ${c.config_api.listen} with ${c.config_api.tokens.length} token(s)`,
    `bus: ${c.bus.nats_url ? `NATS ${c.bus.nats_url}` : 'embedded (in-process)'}; tracing: ${c.telemetry.otlp_endpoint ?? 'off'}`,
  ];
  return lines;
}

/** Key paths (to depth 3) whose values differ between two raw documents. */
export function changedKeys(before: unknown, after: unknown, depth = 3, prefix = ''): string[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const isTable = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (depth === 0 || !isTable(before) || !isTable(after)) return [prefix === '' ? '(document)' : prefix];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.flatMap((k) => changedKeys(before[k], after[k], depth - 1, prefix === '' ? k : `${prefix}.${k}`));
}

/** "changed mysql.read_after_write_seconds, mysql_backends" (at most `limit` keys named). */
export function describeChange(before: unknown, after: unknown, limit = 8): string {
  if (before === undefined) return 'initial configuration';
  const keys = changedKeys(before, after);
  if (keys.length === 0) return 'no changes';
  const named = keys.slice(0, limit).join(', ');
  return keys.length > limit ? `changed ${named} and ${keys.length - limit} more` : `changed ${named}`;
}
