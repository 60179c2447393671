// How many CPUs this process may really use. Node 20's availableParallelism() counts the CPUs the
// scheduler lets it run on (the node's, in a container), not the container's CPU quota, so a pod
// limited to 2 CPUs on a 64-CPU node would start 64 workers — each with its own backend pools.
// The quota is read from cgroup v2 (`cpu.max`: "<quota> <period>" or "max <period>") or, on
// cgroup v1, from `cpu.cfs_quota_us` / `cpu.cfs_period_us` (quota -1: unlimited).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface CpuQuotaPaths {
  /** cgroup v2 */
  readonly cpuMax: string;
  /** cgroup v1 */
  readonly cfsQuota: string;
  readonly cfsPeriod: string;
}

export const CGROUP_CPU_PATHS: CpuQuotaPaths = {
  cpuMax: '/sys/fs/cgroup/cpu.max',
  cfsQuota: '/sys/fs/cgroup/cpu/cpu.cfs_quota_us',
  cfsPeriod: '/sys/fs/cgroup/cpu/cpu.cfs_period_us',
};

function readTrimmed(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function quotaOver(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined;
  return quota / period;
}

/** CPUs the cgroup quota allows (fractional, e.g. 1.5), or undefined when there is no quota. */
export function cgroupCpuQuota(paths: CpuQuotaPaths = CGROUP_CPU_PATHS): number | undefined {
  const v2 = readTrimmed(paths.cpuMax);
  if (v2 !== undefined) {
    const [quota, period] = v2.split(/\s+/);
    if (quota === 'max') return undefined;
    return quotaOver(Number(quota), Number(period ?? 100_000));
  }
  const v1Quota = readTrimmed(paths.cfsQuota);
  const v1Period = readTrimmed(paths.cfsPeriod);
  if (v1Quota === undefined || v1Period === undefined) return undefined;
  return quotaOver(Number(v1Quota), Number(v1Period));
}

/**
 * The default worker count (`workers = 0`): one per CPU the process may use — the smaller of
 * availableParallelism() and the cgroup CPU quota rounded up (a 1.5-CPU quota gives 2), at least 1.
 */
export function usableCpus(paths: CpuQuotaPaths = CGROUP_CPU_PATHS, parallelism: number = availableParallelism()): number {
  const quota = cgroupCpuQuota(paths);
  const byQuota = quota === undefined ? parallelism : Math.ceil(quota);
  return Math.max(1, Math.min(parallelism, byQuota));
}
