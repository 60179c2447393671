import type { ResponseSummary } from '@dbproxy/protocol-mysql';
import { lastGtidOf, onlyLastGtid, waitOutcome, waitQuery } from './causal-reads';
import { gtidText, parseGtids } from './gtid-position';

const summary = (sessionState: ResponseSummary['sessionState']): ResponseSummary =>
  ({ rows: 0, bytes: 0, resultSets: 0, statusFlags: 0, warnings: 0, ok: null, err: null, sessionState, localInfile: null, prepared: null, params: [], columns: [], limitExceeded: null }) as ResponseSummary;

describe('causal reads helpers', () => {
  it('reads the last_gtid an OK packet reports, ignoring other variables and empty values', () => {
    const found = lastGtidOf(summary([{ type: 'system-variable', name: 'autocommit', value: 'ON' }, { type: 'system-variable', name: 'last_gtid', value: '0-1-17' }]));
    expect(found && gtidText(found)).toBe('0-1-17');
    expect(lastGtidOf(summary([{ type: 'system-variable', name: 'last_gtid', value: '' }]))).toBeNull();
    expect(lastGtidOf(summary([]))).toBeNull();
  });

  it('tells a change report that is only last_gtid from one that changed session state', () => {
    expect(onlyLastGtid(summary([{ type: 'system-variable', name: 'last_gtid', value: '0-1-17' }]))).toBe(true);
    expect(onlyLastGtid(summary([{ type: 'system-variable', name: 'last_gtid', value: '0-1-17' }, { type: 'system-variable', name: 'time_zone', value: '+01:00' }]))).toBe(false);
    expect(onlyLastGtid(summary([{ type: 'schema', schema: 'app' }]))).toBe(false);
    expect(onlyLastGtid(summary([]))).toBe(false);
  });

  it('waits with the position and the timeout in seconds, and reads the outcome from the row count', () => {
    expect(waitQuery(parseGtids('0-1-17,1-2-3'), 250)).toBe(
      "SELECT 1 FROM DUAL WHERE MASTER_GTID_WAIT('0-1-17,1-2-3', 0) = 0 UNION ALL SELECT 1 FROM DUAL WHERE MASTER_GTID_WAIT('0-1-17,1-2-3', 0.250) = 0",
    );
    expect([2, 1, 0].map(waitOutcome)).toEqual(['replica_now', 'replica_after_wait', 'primary']);
  });
});
