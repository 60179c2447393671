import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupCpuQuota, usableCpus, type CpuQuotaPaths } from './cpu-quota';

describe('usableCpus: the default worker count honours the cgroup CPU quota', () => {
  let dir: string;
  let paths: CpuQuotaPaths;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cpu-quota-'));
    paths = { cpuMax: join(dir, 'cpu.max'), cfsQuota: join(dir, 'cpu.cfs_quota_us'), cfsPeriod: join(dir, 'cpu.cfs_period_us') };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('cgroup v2: a 2-CPU quota on a 64-CPU node gives 2 workers', () => {
    writeFileSync(paths.cpuMax, '200000 100000\n');
    expect(cgroupCpuQuota(paths)).toBe(2);
    expect(usableCpus(paths, 64)).toBe(2);
  });

  it('cgroup v2: a fractional quota rounds up, and never below 1', () => {
    writeFileSync(paths.cpuMax, '150000 100000\n');
    expect(usableCpus(paths, 64)).toBe(2);
    writeFileSync(paths.cpuMax, '10000 100000\n');
    expect(usableCpus(paths, 64)).toBe(1);
  });

  it('cgroup v2: "max" (no limit) leaves the CPUs the process sees', () => {
    writeFileSync(paths.cpuMax, 'max 100000\n');
    expect(cgroupCpuQuota(paths)).toBeUndefined();
    expect(usableCpus(paths, 8)).toBe(8);
  });

  it('a quota above the visible CPUs does not add workers', () => {
    writeFileSync(paths.cpuMax, '1600000 100000\n');
    expect(usableCpus(paths, 4)).toBe(4);
  });

  it('cgroup v1: cfs_quota_us / cfs_period_us, -1 meaning unlimited', () => {
    writeFileSync(paths.cfsQuota, '300000\n');
    writeFileSync(paths.cfsPeriod, '100000\n');
    expect(usableCpus(paths, 32)).toBe(3);
    writeFileSync(paths.cfsQuota, '-1\n');
    expect(usableCpus(paths, 32)).toBe(32);
  });

  it('without cgroup files (not Linux, or not in a container) uses availableParallelism', () => {
    expect(cgroupCpuQuota(paths)).toBeUndefined();
    expect(usableCpus(paths, 6)).toBe(6);
  });

  it('garbage in cpu.max is ignored rather than trusted', () => {
    writeFileSync(paths.cpuMax, 'nonsense\n');
    expect(usableCpus(paths, 6)).toBe(6);
  });
});
