import { intervalFor } from './phases';
import { nextStep } from './state-machine';
import type { PollOutcome, TopologyRow } from './topology-observation';

const COLUMNS = ['id', 'endpoint', 'port', 'role', 'status', 'version'];
const row = (role: string | null, status: string | null): TopologyRow => ({ id: '1', endpoint: 'h', port: 3306, role, status, version: '1.0' });
const rows = (...r: TopologyRow[]): PollOutcome => ({ kind: 'rows', rows: r, columns: COLUMNS });
const both = (status: string) => rows(row('BLUE_GREEN_DEPLOYMENT_SOURCE', status), row('BLUE_GREEN_DEPLOYMENT_TARGET', status));
const targetOnly = (status: string) => rows(row('BLUE_GREEN_DEPLOYMENT_TARGET', status));

describe('nextStep', () => {
  it('moves forward through the converted statuses, skipping states', () => {
    expect(nextStep('NONE', both('AVAILABLE'))).toEqual({ kind: 'forward', to: 'AVAILABLE', status: 'AVAILABLE' });
    expect(nextStep('AVAILABLE', both('SWITCHOVER_IN_POST_PROCESSING'))).toEqual({ kind: 'forward', to: 'WRITER_SWITCHOVER_POST_PROCESSING', status: 'SWITCHOVER_IN_POST_PROCESSING' });
    expect(nextStep('NONE', both('SWITCHOVER_INITIATED'))).toMatchObject({ kind: 'forward', to: 'WRITER_SWITCHOVER_INITIATED' });
  });

  it('treats the same phase as equal (reconciliation only)', () => {
    expect(nextStep('WRITER_SWITCHOVER_IN_PROGRESS', both('SWITCHOVER_IN_PROGRESS'))).toEqual({ kind: 'equal', phase: 'WRITER_SWITCHOVER_IN_PROGRESS' });
  });

  it('enters writer completion on a first observation of SWITCHOVER_COMPLETED and ignores repeats after it advanced', () => {
    expect(nextStep('NONE', targetOnly('SWITCHOVER_COMPLETED'))).toMatchObject({ kind: 'forward', to: 'WRITER_SWITCHOVER_COMPLETED' });
    expect(nextStep('READER_SWITCHOVER_IN_PROGRESS', targetOnly('SWITCHOVER_COMPLETED'))).toMatchObject({ kind: 'ignore' });
  });

  it('rolls back on a lower status and on an unknown status from an active state', () => {
    expect(nextStep('WRITER_SWITCHOVER_IN_PROGRESS', both('AVAILABLE'))).toEqual({ kind: 'backward', to: 'AVAILABLE', status: 'AVAILABLE' });
    expect(nextStep('WRITER_SWITCHOVER_POST_PROCESSING', both('SWITCHOVER_INITIATED'))).toMatchObject({ kind: 'backward', to: 'WRITER_SWITCHOVER_INITIATED' });
    expect(nextStep('WRITER_SWITCHOVER_INITIATED', both('SOMETHING_NEW'))).toEqual({ kind: 'backward', to: 'NONE', status: 'SOMETHING_NEW' });
  });

  it('resets to NONE without rollback on an empty status, a missing target row or a non blue/green result', () => {
    expect(nextStep('WRITER_SWITCHOVER_IN_PROGRESS', both(''))).toMatchObject({ kind: 'reset', why: 'empty target status' });
    expect(nextStep('AVAILABLE', rows(row('BLUE_GREEN_DEPLOYMENT_SOURCE', 'AVAILABLE')))).toMatchObject({ kind: 'reset', why: 'no target row' });
    expect(nextStep('AVAILABLE', rows(row(null, 'AVAILABLE'), row('BLUE_GREEN_DEPLOYMENT_TARGET', 'AVAILABLE')))).toMatchObject({ kind: 'reset' });
    expect(nextStep('AVAILABLE', { kind: 'rows', rows: [row('x', 'y')], columns: ['id', 'endpoint'] })).toMatchObject({ kind: 'reset' });
  });

  it('classifies from the first row only; empty strings are not NULL', () => {
    expect(nextStep('NONE', rows(row('', ''), row('BLUE_GREEN_DEPLOYMENT_TARGET', 'AVAILABLE')))).toMatchObject({ kind: 'forward', to: 'AVAILABLE' });
  });

  it('chooses cleanup by the stored phase when the topology drains, keeping absence distinct', () => {
    expect(nextStep('READER_SWITCHOVER_IN_PROGRESS', { kind: 'empty' })).toEqual({ kind: 'drained', cleanup: 'success', absent: false });
    expect(nextStep('WRITER_SWITCHOVER_IN_PROGRESS', { kind: 'absent', detail: 'ER_NO_SUCH_TABLE' })).toEqual({ kind: 'drained', cleanup: 'rollback', absent: true });
    expect(nextStep('NONE', { kind: 'empty' })).toEqual({ kind: 'drained', cleanup: 'none', absent: false });
    expect(nextStep('AVAILABLE', { kind: 'query-error', detail: 'boom' })).toEqual({ kind: 'query-error', detail: 'boom' });
  });
});

describe('intervalFor', () => {
  it('is 250 ms in AVAILABLE, 100 ms in the active writer phases and the baseline otherwise', () => {
    expect(intervalFor('AVAILABLE', 1000)).toBe(250);
    for (const p of ['WRITER_SWITCHOVER_INITIATED', 'WRITER_SWITCHOVER_IN_PROGRESS', 'WRITER_SWITCHOVER_POST_PROCESSING'] as const) expect(intervalFor(p, 1000)).toBe(100);
    for (const p of ['NONE', 'WRITER_SWITCHOVER_COMPLETED', 'READER_SWITCHOVER_IN_PROGRESS', 'SWITCHOVER_COMPLETED'] as const) expect(intervalFor(p, 1000)).toBe(1000);
  });
});
