// The effects a worker asks for, sent as `dbproxy.bgd.actions` (topology applies them to the
// snapshots the edges follow), each counted and logged with its deployment.
import { publishMessage, Subjects, type BgdAction, type Bus } from '@dbproxy/bus';
import type { Logger } from '@dbproxy/observability';
import type { BgdMetrics } from './metrics';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type ActionBody = DistributiveOmit<BgdAction, 'deployment' | 'actionId' | 'issuedAt' | 'reason'>;

export interface ActionSink {
  send(action: ActionBody, reason: string): void;
}

let sequence = 0;

export function busActionSink(bus: Bus, deployment: string, logger: Logger, metrics: BgdMetrics): ActionSink {
  return {
    send(action, reason) {
      const actionId = `${deployment}-${Date.now().toString(36)}-${++sequence}`;
      const message = { ...action, deployment, actionId, issuedAt: new Date().toISOString(), reason: reason.slice(0, 1024) } as BgdAction;
      publishMessage(bus, Subjects.bgdActions, {}, message);
      metrics.action(deployment, action.action);
      logger.info({ deployment, ...action, actionId, reason }, 'blue/green action sent');
    },
  };
}
