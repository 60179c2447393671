// How many units a lent connection's pipeline may take (the edges' `pipeline_depth`). A fixed
// setting N is used as is (1 = never pipelined). "auto" decides at each join from the pool's
// measured waiters: with nobody waiting the depth is 1, so a unit waits for (or gets) a connection
// of its own and sees a direct connection's latency; as units queue up, each lending may take
// 1 + ceil(waiters / pool size) units, at most AUTO_PIPELINE_MAX_DEPTH — the queue drains through
// the lent connections at the rate it builds up, instead of through one round trip per unit.

/** The `pipeline_depth` setting: a fixed depth, or "auto". */
export type PipelineDepthSetting = number | 'auto';

/** The most units "auto" lets a lending take. */
export const AUTO_PIPELINE_MAX_DEPTH = 16;

/** The pool figures "auto" decides from. */
export interface PipelineLoad {
  /** Acquires waiting for a connection now. */
  readonly waiting: number;
  /** Connections the pool may open (its max). */
  readonly size: number;
}

/** Depth for a join now: N for a fixed setting; for "auto", min(16, 1 + ceil(waiting / size)). */
export function pipelineDepth(setting: PipelineDepthSetting, load: PipelineLoad): number {
  if (setting !== 'auto') return setting;
  if (load.waiting <= 0) return 1;
  return Math.min(AUTO_PIPELINE_MAX_DEPTH, 1 + Math.ceil(load.waiting / Math.max(1, load.size)));
}

/** The most units a lending may ever take under `setting` (where it stops being joinable). */
export function pipelineDepthCap(setting: PipelineDepthSetting): number {
  return setting === 'auto' ? AUTO_PIPELINE_MAX_DEPTH : setting;
}

/** Whether lendings under `setting` may ever be joined (false for a fixed 1). */
export function pipelines(setting: PipelineDepthSetting): boolean {
  return setting === 'auto' || setting > 1;
}
