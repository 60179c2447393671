// The bgd-monitor service: one worker per active [[bgd_deployments]] entry, phase changes on
// `dbproxy.bgd.<deployment>.state`, effects on `dbproxy.bgd.actions`, and GET /bgd.
import type { RunningService, ServiceContext, ServiceDefinition } from '@dbproxy/runtime';
import { DeploymentDispatcher, workerFactory } from './deployment-dispatcher';
import { busActionSink } from './effects';
import { hostResolver } from './host-resolver';
import { BgdMetrics } from './metrics';

export const bgdMonitorService: ServiceDefinition = {
  name: 'bgd-monitor',
  // proxy.admin.bgd_monitor: this service's admin HTTP address when it runs alone
  adminKey: 'bgd_monitor',
  async start(ctx: ServiceContext): Promise<RunningService> {
    const metrics = new BgdMetrics(ctx.metrics);
    // proxy.test_hosts: TEST ONLY name answers (the simulator cannot change DNS)
    const resolve = hostResolver(() => ctx.config.current().config.proxy.test_hosts);
    const dispatcher = new DeploymentDispatcher(
      workerFactory((deployment) => ({ bus: ctx.bus, logger: ctx.logger, metrics, resolve, actions: busActionSink(ctx.bus, deployment, ctx.logger, metrics) })),
      ctx.logger,
    );
    // bgd_deployments: each enabled entry with an eligible blue writer gets a worker
    dispatcher.reconcile(ctx.config.current().config);
    const unfollow = ctx.config.onChange((next) => dispatcher.reconcile(next.config));
    ctx.addAdminRoute({ method: 'GET', url: '/bgd', handler: async () => ({ deployments: dispatcher.describe() }) });
    ctx.readiness.set('bgd', 'ready');
    return {
      async close() {
        unfollow();
        await dispatcher.stop();
      },
    };
  },
};
