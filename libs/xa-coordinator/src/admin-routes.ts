// Admin HTTP of the xa-coordinator: GET /xa lists prepared (in-doubt) branches on every primary
// with their age and this coordinator's decision; POST /xa/{xid}/commit|rollback settles one.
import { snakeCaseKeys, type ServiceContext } from '@dbproxy/runtime';
import { DbproxyError } from '@dbproxy/util';
import { XaErrors } from './errors';
import type { DecisionJournal } from './journal/decision-journal';
import type { OperatorActions } from './operator-actions';
import type { XaRecovery } from './recovery';

const STATUS: Record<string, number> = {
  [XaErrors.notPrepared.code]: 404,
  [XaErrors.decisionConflict.code]: 409,
};

export function addXaRoutes(ctx: ServiceContext, recovery: XaRecovery, journal: DecisionJournal, actions: OperatorActions): void {
  ctx.addAdminRoute({
    method: 'GET',
    url: '/xa',
    handler: async () => {
      const scan = await recovery.scan();
      const open = journal.openDecisions().map((d) => ({ xid: d.xid, decidedAt: new Date(d.at).toISOString(), ageSeconds: (Date.now() - d.at) / 1000, participants: d.branches.map((b) => b.backend) }));
      return snakeCaseKeys({ coordinator: journal.coordinatorId, inDoubt: scan.branches, unreachable: scan.unreachable, openDecisions: open, journal: journal.statistics() });
    },
  });
  for (const action of ['commit', 'rollback'] as const) {
    ctx.addAdminRoute({
      method: 'POST',
      url: `/xa/:xid/${action}`,
      handler: async (req, reply) => {
        try {
          return snakeCaseKeys(await actions.settle((req.params as { xid: string }).xid, action));
        } catch (err) {
          if (err instanceof DbproxyError && STATUS[err.code]) return reply.code(STATUS[err.code] as number).send({ error: err.code, message: err.message });
          throw err;
        }
      },
    });
  }
}
