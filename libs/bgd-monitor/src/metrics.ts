// Prometheus metrics of bgd-monitor, by deployment: poll outcomes (absent, empty, query error,
// rows kept distinct), phase, phase transitions, actions sent and the polling interval.
import type { MetricsRegistry } from '@dbproxy/observability';
import { PHASE_ORDER, type BgdPhase } from './phases';

export class BgdMetrics {
  private readonly polls;
  private readonly phase;
  private readonly transitions;
  private readonly actions;
  private readonly interval;

  constructor(metrics: MetricsRegistry) {
    this.polls = metrics.counter({ name: 'dbproxy_bgd_polls_total', help: 'Polls of mysql.rds_topology, by outcome (absent, empty, query_error, rows)', labelNames: ['deployment', 'outcome'] });
    this.phase = metrics.gauge({ name: 'dbproxy_bgd_phase', help: 'The phase a deployment is in (1 for the current phase)', labelNames: ['deployment', 'phase'] });
    this.transitions = metrics.counter({ name: 'dbproxy_bgd_phase_transitions_total', help: 'Phase changes, by deployment and phase entered', labelNames: ['deployment', 'from', 'to'] });
    this.actions = metrics.counter({ name: 'dbproxy_bgd_actions_sent_total', help: 'Blue/green actions sent, by deployment and action', labelNames: ['deployment', 'action'] });
    this.interval = metrics.gauge({ name: 'dbproxy_bgd_check_interval_seconds', help: 'Effective polling interval of a deployment', labelNames: ['deployment'] });
  }

  polled(deployment: string, outcome: string): void {
    this.polls.inc({ deployment, outcome: outcome.replace('-', '_') });
  }

  transition(deployment: string, from: BgdPhase, to: BgdPhase): void {
    this.transitions.inc({ deployment, from, to });
    for (const p of PHASE_ORDER) this.phase.set({ deployment, phase: p }, p === to ? 1 : 0);
  }

  action(deployment: string, action: string): void {
    this.actions.inc({ deployment, action });
  }

  intervalMs(deployment: string, ms: number): void {
    this.interval.set({ deployment }, ms / 1000);
  }
}
