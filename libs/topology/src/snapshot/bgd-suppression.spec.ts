// Read-only suppression keys: owned per deployment, exact cleanup, re-keyed on a configuration change.
import type { BgdPhase, BgdState } from '@dbproxy/bus';
import type { DbproxyConfig } from '@dbproxy/config';
import { ReadOnlySuppression } from './bgd-suppression';

const backend = (name: string, address: string) => ({ name, address });
const config = (readers: string[]) =>
  ({
    mysql_backends: [backend('a', 'A.db:3306'), backend('a-r', 'a-r.db:3306'), backend('a-r2', 'a-r2.db:3306'), backend('b', 'b.db:3306')],
    bgd_deployments: [
      { name: 'one', blue_writer: 'a', blue_readers: readers, green_readers: [] },
      { name: 'two', blue_writer: 'b', blue_readers: [], green_readers: [] },
    ],
  }) as unknown as DbproxyConfig;
const state = (deployment: string, phase: BgdPhase): BgdState => ({ deployment, phase, previousPhase: 'NONE', observedStatus: null, writer: null, reason: 't', changedAt: new Date(0).toISOString() });

describe('ReadOnlySuppression', () => {
  it('suppresses a deployment’s endpoints in the active writer phases only and erases exactly its keys', () => {
    const s = new ReadOnlySuppression();
    expect(s.follow(state('one', 'AVAILABLE'), config(['a-r']))).toBe(false);
    expect(s.suppressed('a.db:3306')).toBe(false);
    expect(s.follow(state('one', 'WRITER_SWITCHOVER_INITIATED'), config(['a-r']))).toBe(true);
    expect(s.follow(state('two', 'WRITER_SWITCHOVER_IN_PROGRESS'), config(['a-r']))).toBe(true);
    expect(s.suppressed('a.db:3306') && s.suppressed('a-r.db:3306') && s.suppressed('b.db:3306')).toBe(true);
    // 'one' leaves the active phases even though its server was removed from the configuration meanwhile
    expect(s.follow(state('one', 'NONE'), { ...config([]), mysql_backends: [] } as unknown as DbproxyConfig)).toBe(true);
    expect(s.suppressed('a.db:3306')).toBe(false);
    expect(s.suppressed('a-r.db:3306')).toBe(false);
    expect(s.suppressed('b.db:3306')).toBe(true);
  });

  it('moves suppression to the new reader set when the configuration changes while active', () => {
    const s = new ReadOnlySuppression();
    s.follow(state('one', 'WRITER_SWITCHOVER_POST_PROCESSING'), config(['a-r']));
    s.reconfigure(config(['a-r2']));
    expect(s.suppressed('a-r.db:3306')).toBe(false);
    expect(s.suppressed('a-r2.db:3306')).toBe(true);
  });
});
