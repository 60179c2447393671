// A process whose services do not all start serves nothing: every service already started is
// closed, every listener opened (also those of the service that failed half-way) stops, the
// runtime's own parts close, and the caller exits 1 (no half-started process stays up).
import type { FastifyInstance } from 'fastify';
import type { Bus } from '@dbproxy/bus';
import type { Logger, Tracing } from '@dbproxy/observability';
import { errorMessage } from '@dbproxy/util';
import type { ConfigFollower } from './config-follower';
import type { ServiceHost } from './service-host';
import { CLOSE_GRACE_MS, closeBounded, settleWithin } from './shutdown';

/** Start-up failed in this process; what failed is named (`mysql-edge`, `admin HTTP`). */
export class StartupFailed extends Error {
  constructor(
    readonly component: string,
    override readonly cause: unknown,
  ) {
    super(`${component} failed to start: ${errorMessage(cause)}`);
  }
}

export interface StartedParts {
  readonly hosts: readonly ServiceHost[];
  readonly admin: FastifyInstance | undefined;
  readonly config: ConfigFollower;
  readonly bus: Bus;
  readonly tracing: Tracing;
  readonly logger: Logger;
  readonly unobserve: () => void;
}

/** Undoes a partial start; resolves when everything that was started is closed (each step bounded). */
export async function abandonStart(failure: StartupFailed, parts: StartedParts): Promise<void> {
  const { hosts, logger } = parts;
  const started = hosts.filter((h) => h.running !== undefined).map((h) => h.definition.name);
  logger.error({ component: failure.component, err: errorMessage(failure.cause), stopping: started }, `start-up failed: ${failure.message}; stopping every service started in this process`);
  for (const host of hosts) host.listeners.stopAccepting();
  for (const host of hosts) host.listeners.destroyConnections();
  await Promise.allSettled(hosts.map((h) => h.workers?.drain(Date.now())));
  await settleWithin(
    hosts.map((h) => h.running?.close()),
    CLOSE_GRACE_MS,
  );
  parts.config.stop();
  await closeBounded('admin HTTP', () => parts.admin?.close(), logger);
  await closeBounded('bus', () => parts.bus.close(), logger);
  await closeBounded('trace export', () => parts.tracing.shutdown(), logger);
  parts.unobserve();
  logger.error({ component: failure.component, stopped: started }, 'stopped after a start-up failure');
}
