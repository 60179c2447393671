// Every service this build contains, by name: what `dbproxy start` can run.
import { bgdMonitorService } from '@dbproxy/bgd-monitor';
import { configApiService } from '@dbproxy/config-api';
import { mysqlEdgeService } from '@dbproxy/mysql-edge';
import { pgEdgeService } from '@dbproxy/pg-edge';
import { redisEdgeService } from '@dbproxy/redis-edge';
import type { ServiceDefinition } from '@dbproxy/runtime';
import { topologyService } from '@dbproxy/topology';
import { xaCoordinatorService } from '@dbproxy/xa-coordinator';

export const SERVICES: readonly ServiceDefinition[] = [configApiService, topologyService, pgEdgeService, mysqlEdgeService, redisEdgeService, bgdMonitorService, xaCoordinatorService];

/** The definitions for `names` (all when empty), or the names that do not exist. */
export function resolveServices(names: readonly string[]): { ok: true; services: ServiceDefinition[] } | { ok: false; unknown: string[] } {
  if (names.length === 0) return { ok: true, services: [...SERVICES] };
  const unknown = names.filter((n) => !SERVICES.some((s) => s.name === n));
  if (unknown.length > 0) return { ok: false, unknown };
  return { ok: true, services: SERVICES.filter((s) => names.includes(s.name)) };
}
