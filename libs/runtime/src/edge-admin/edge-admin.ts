// An edge service's admin interface over all its processes: sessions, pools, kill, pause and
// resume are asked of every worker (or of this process when it serves the connections itself),
// each answer bounded in time.
import type { EdgeAdminReply, Protocol } from '@dbproxy/bus';
import type { ServiceContext } from '../service';
import { PauseGate } from './pause-gate';
import { mergePools, type PoolSnapshot, type SessionSnapshot, type SessionSource } from './session-report';

interface ProcessState {
  readonly paused: boolean;
  readonly statementsTotal: number;
}
interface ProcessSessions extends ProcessState {
  readonly sessions: SessionSnapshot[];
}
interface ProcessPools extends ProcessState {
  readonly pools: PoolSnapshot[];
}

/** What the runtime's admin HTTP routes and bus subject ask of an edge service. */
export interface EdgeAdmin {
  readonly protocol: Protocol;
  sessions(budgetMs: number): Promise<EdgeAdminReply>;
  pools(budgetMs: number): Promise<EdgeAdminReply>;
  kill(session: string, reason: string, budgetMs: number): Promise<EdgeAdminReply>;
  /** Holds new statements; a held one fails after `holdSeconds` (absent: proxy.pause_timeout_seconds). */
  pause(holdSeconds: number | undefined, budgetMs: number): Promise<EdgeAdminReply>;
  resume(budgetMs: number): Promise<EdgeAdminReply>;
}

const TOPICS = { sessions: 'admin:sessions', pools: 'admin:pools', kill: 'admin:kill', pause: 'admin:pause', resume: 'admin:resume' } as const;

function summed(protocol: Protocol, answers: readonly ProcessState[]): EdgeAdminReply {
  let statementsTotal = 0;
  for (const a of answers) statementsTotal += a.statementsTotal;
  return { protocol, paused: answers.some((a) => a.paused), statementsTotal };
}

/**
 * Registers this process's answers (sessions and pools from `source`, pause through `gate`) and
 * returns the service-wide admin interface for RunningService.edgeAdmin.
 */
export function edgeAdmin(ctx: ServiceContext, protocol: Protocol, source: SessionSource, gate: PauseGate): EdgeAdmin {
  const state = (): ProcessState => ({ paused: gate.paused, statementsTotal: source.statementsTotal() });
  ctx.provide(TOPICS.sessions, (): ProcessSessions => ({ ...state(), sessions: source.sessions() }));
  ctx.provide(TOPICS.pools, (): ProcessPools => ({ ...state(), pools: source.pools() }));
  ctx.provide(TOPICS.kill, (arg) => {
    const { session, reason } = arg as { session: string; reason: string };
    return { ...state(), killed: source.kill(session, reason) };
  });
  ctx.provide(TOPICS.pause, (arg) => {
    gate.pause((arg as { holdMs: number }).holdMs);
    return state();
  });
  ctx.provide(TOPICS.resume, () => {
    gate.resume();
    return state();
  });
  const ask = async <T extends ProcessState>(topic: string, budgetMs: number, arg?: unknown): Promise<T[]> => (await ctx.gather(topic, arg, budgetMs)) as T[];
  return {
    protocol,
    async sessions(budgetMs) {
      const answers = await ask<ProcessSessions>(TOPICS.sessions, budgetMs);
      return { ...summed(protocol, answers), sessions: answers.flatMap((a) => a.sessions) };
    },
    async pools(budgetMs) {
      const answers = await ask<ProcessPools>(TOPICS.pools, budgetMs);
      return { ...summed(protocol, answers), pools: mergePools(answers.flatMap((a) => a.pools)) };
    },
    async kill(session, reason, budgetMs) {
      const answers = await ask<ProcessState & { killed: boolean }>(TOPICS.kill, budgetMs, { session, reason });
      return { ...summed(protocol, answers), killed: answers.some((a) => a.killed) };
    },
    async pause(holdSeconds, budgetMs) {
      const holdMs = (holdSeconds ?? ctx.config.current().config.proxy.pause_timeout_seconds) * 1000;
      return summed(protocol, await ask(TOPICS.pause, budgetMs, { holdMs }));
    },
    async resume(budgetMs) {
      return summed(protocol, await ask(TOPICS.resume, budgetMs));
    },
  };
}
