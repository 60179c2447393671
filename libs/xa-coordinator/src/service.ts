// The xa-coordinator service: opens the decision journal (single writer), serves
// dbproxy.xa.execute, runs recovery at start and every recovery_interval_seconds, and answers
// GET /xa on its admin HTTP (proxy.admin.xa_coordinator when it runs alone).
import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { serveMessages, Subjects, type Subscription } from '@dbproxy/bus';
import type { RunningService, ServiceContext, ServiceDefinition } from '@dbproxy/runtime';
import { errorMessage } from '@dbproxy/util';
import { addXaRoutes } from './admin-routes';
import { FAULT_ENV, FaultHook } from './fault-hook';
import { DecisionJournal } from './journal/decision-journal';
import { XaMetrics } from './metrics';
import { OperatorActions } from './operator-actions';
import { PhaseSpans } from './phase-spans';
import { ParticipantConnections } from './participants/participant-connections';
import { XaRecovery } from './recovery';
import { xaSettings } from './settings';
import { TwoPhaseCommit } from './two-phase-commit';
import { XidFactory } from './xid';

function startDisabled(ctx: ServiceContext): RunningService {
  ctx.addAdminRoute({ method: 'GET', url: '/xa', handler: async () => ({ enabled: false, in_doubt: [] }) });
  ctx.logger.info('xa-coordinator: [mysql.xa] enabled = false; dbproxy.xa.execute is not served');
  return { close: async () => undefined };
}

/** Runs recovery passes: the first at once (readiness waits for it), then on the interval. */
function scheduleRecovery(ctx: ServiceContext, recovery: XaRecovery, intervalMs: number): () => void {
  ctx.readiness.set('recovery', 'unready', 'first recovery pass running');
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const run = async (): Promise<void> => {
    try {
      await recovery.pass();
    } catch (err) {
      ctx.logger.warn({ err: errorMessage(err) }, 'xa recovery pass failed');
    }
  };
  void run().then(() => {
    ctx.readiness.set('recovery', 'ready');
    const loop = () => {
      if (stopped) return;
      timer = setTimeout(() => void run().then(loop), intervalMs);
    };
    loop();
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

async function drainInFlight(inFlight: ReadonlySet<string>, deadline: number): Promise<void> {
  while (inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

export const xaCoordinatorService: ServiceDefinition = {
  name: 'xa-coordinator',
  adminKey: 'xa_coordinator',
  async start(ctx: ServiceContext): Promise<RunningService> {
    const settings = xaSettings(ctx.local);
    if (!settings.enabled) return startDisabled(ctx);
    const journal = await DecisionJournal.open(settings.journalPath, {
      groupCommit: settings.groupCommit,
      onTornTail: (reason, bytes) => ctx.logger.warn({ journal: settings.journalPath, reason, droppedBytes: bytes }, 'xa journal: torn tail cut'),
    });
    const metrics = new XaMetrics(ctx.metrics, () => journal.statistics());
    const xids = new XidFactory(journal.coordinatorId);
    const connections = new ParticipantConnections(settings.connectTimeoutMs);
    const backends = () => ctx.config.current().config.mysql_backends;
    const inFlight = new Set<string>();
    const fault = FaultHook.fromEnvironment(ctx.env[FAULT_ENV], ctx.logger);
    const tpc = new TwoPhaseCommit({ settings, journal, xids, connections, backends, fault, inFlight });
    const recovery = new XaRecovery({ journal, xids, connections, backends, inFlight, metrics, logger: ctx.logger, timeoutMs: settings.decisionTimeoutMs });
    addXaRoutes(ctx, recovery, journal, new OperatorActions(recovery, journal, metrics));
    ctx.logger.info({ journal: settings.journalPath, coordinator: journal.coordinatorId, openDecisions: journal.openDecisions().length }, 'xa-coordinator journal open');
    const stopRecovery = scheduleRecovery(ctx, recovery, settings.recoveryIntervalMs);
    const sub: Subscription = serveMessages(ctx.bus, Subjects.xaExecute.pattern(), async (request) => {
      const started = Date.now();
      // the handler runs in the trace context of the request's headers: this span continues the edge's
      const span = ctx.tracer.startSpan('xa.execute', { kind: SpanKind.SERVER, attributes: { 'db.system.name': 'mysql', 'db.operation.name': 'XA', 'dbproxy.xa.participants': request.participants.length } });
      try {
        const reply = await tpc.execute(request, started, new PhaseSpans(ctx.tracer, span, context.active()));
        span.setAttributes({ 'dbproxy.xa.xid': reply.xid, 'dbproxy.xa.decision': reply.decision });
        metrics.transaction(reply.decision, (Date.now() - started) / 1000);
        return reply;
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(err) });
        throw err;
      } finally {
        span.end();
      }
    });
    return {
      async drain(deadline: number) {
        sub.unsubscribe();
        await drainInFlight(inFlight, deadline);
      },
      async close() {
        stopRecovery();
        sub.unsubscribe();
        connections.close();
        await journal.close();
      },
    };
  },
};
