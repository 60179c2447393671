// Readiness: each component reports ready, degraded or unready with a reason; /readyz is 503
// while any component is unready and 200 (with the degraded reasons) otherwise.

export type ComponentStatus = 'ready' | 'degraded' | 'unready';

export interface ComponentState {
  readonly status: ComponentStatus;
  readonly reason?: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly status: ComponentStatus;
  readonly components: Record<string, ComponentState>;
  /** One line per component that is not ready. */
  readonly reasons: string[];
}

export class Readiness {
  private readonly components = new Map<string, ComponentState>();

  /** Sets the state of `component` (e.g. `mysql-edge/topology`). */
  set(component: string, status: ComponentStatus, reason?: string): void {
    this.components.set(component, reason === undefined ? { status } : { status, reason });
  }

  remove(component: string): void {
    this.components.delete(component);
  }

  report(): ReadinessReport {
    const components: Record<string, ComponentState> = {};
    const reasons: string[] = [];
    let status: ComponentStatus = 'ready';
    for (const [name, state] of [...this.components].sort(([a], [b]) => a.localeCompare(b))) {
      components[name] = state;
      if (state.status === 'ready') continue;
      reasons.push(`${name}: ${state.status}${state.reason ? ` (${state.reason})` : ''}`);
      if (state.status === 'unready') status = 'unready';
      else if (status === 'ready') status = 'degraded';
    }
    return { ready: status !== 'unready', status, components, reasons };
  }
}
