import type { ResponseSummary } from '@dbproxy/protocol-mysql';
import { MetricsRegistry } from '@dbproxy/observability';
import { CausalReads, lastGtidOf, onlyLastGtid, waitOutcome, waitQuery } from './causal-reads';
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

describe('CausalReads positions', () => {
  it('learns what topology saw a replica apply, per domain, and ignores what is not a MariaDB GTID list', () => {
    const causal = new CausalReads(new MetricsRegistry());
    expect(causal.known('r1', parseGtids('0-1-5'))).toBe(false);
    causal.observed('r1', '0-1-7,1-2-3');
    expect(causal.known('r1', parseGtids('0-1-5'))).toBe(true);
    expect(causal.known('r1', parseGtids('0-1-7,1-2-3'))).toBe(true);
    expect(causal.known('r1', parseGtids('0-1-7,1-2-4'))).toBe(false); // domain 1 not reached
    expect(causal.known('r1', parseGtids('2-1-1'))).toBe(false); // a domain never seen
    expect(causal.known('r2', parseGtids('0-1-5'))).toBe(false);
    causal.observed('r1', '0-1-6'); // an older report does not move it back
    expect(causal.known('r1', parseGtids('0-1-7'))).toBe(true);
    causal.observed('r2', '3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5'); // MySQL's gtid_executed
    causal.observed('r2', null);
    causal.observed('r2', '');
    expect(causal.known('r2', parseGtids('0-1-1'))).toBe(false);
  });
});
