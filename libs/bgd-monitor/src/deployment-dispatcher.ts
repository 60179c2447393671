// Keeps one worker per active deployment (spec 001 "Worker And Configuration Lifetime"): a checksum
// change refreshes the worker in place; disable, removal or loss of the blue writer stops it (with
// rollback); re-enabling creates a fresh worker.
import type { DbproxyConfig, DeepReadonly } from '@dbproxy/config';
import type { Logger } from '@dbproxy/observability';
import { activeDeployments, type DeploymentSettings } from './deployment-settings';
import { DeploymentWorker, type WorkerDeps } from './deployment-worker';

export type WorkerFactory = (settings: DeploymentSettings) => DeploymentWorker;

export function workerFactory(deps: (deployment: string) => WorkerDeps): WorkerFactory {
  return (settings) => new DeploymentWorker(settings, deps(settings.name));
}

export class DeploymentDispatcher {
  private readonly workers = new Map<string, DeploymentWorker>();
  private stopping: Promise<void>[] = [];

  constructor(
    private readonly create: WorkerFactory,
    private readonly logger: Logger,
  ) {}

  /** Reconciles the workers with a configuration (at start and on every new epoch). */
  reconcile(config: DeepReadonly<DbproxyConfig>): void {
    const active = new Map(activeDeployments(config).map((d) => [d.name, d]));
    for (const [name, worker] of this.workers) {
      if (active.has(name)) continue;
      this.workers.delete(name);
      const configured = config.bgd_deployments.find((d) => d.name === name);
      const why = !configured ? 'deployment removed' : !configured.enabled ? 'deployment disabled' : 'blue writer no longer eligible';
      this.logger.info({ deployment: name, reason: why }, 'blue/green worker stopping');
      this.stopping.push(worker.stop(why));
    }
    for (const [name, settings] of active) {
      const worker = this.workers.get(name);
      if (!worker) {
        const fresh = this.create(settings);
        this.workers.set(name, fresh);
        this.logger.info({ deployment: name, mode: settings.mode, checksum: settings.checksum }, 'blue/green worker started');
        fresh.start();
      } else if (worker.checksum !== settings.checksum) {
        worker.refresh(settings);
      }
    }
  }

  describe(): Record<string, unknown>[] {
    return [...this.workers.values()].map((w) => w.describe());
  }

  async stop(): Promise<void> {
    await Promise.all([...[...this.workers.values()].map((w) => w.stop('service stopping')), ...this.stopping]);
    this.workers.clear();
  }
}
