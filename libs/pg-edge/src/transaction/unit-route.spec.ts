// decideUnit: reads to replicas, everything else to the primary, refusals transaction mode cannot carry.
import { SqlRouter } from '@dbproxy/sql';
import { decideUnit } from './unit-route';

const router = new SqlRouter({ dialect: 'postgresql', shardRules: [], multiShard: 'reject', cacheSize: 100 });
const decide = (sql: string[], listener: 'read_write' | 'read_only' = 'read_write', raw = false) => decideUnit(sql.map((s) => router.route(s)), listener, raw);

describe('decideUnit', () => {
  it('sends plain reads to a replica unless the read-after-write window is open', () => {
    expect(decide(['SELECT * FROM t WHERE id = $1'])).toMatchObject({ kind: 'run', role: 'replica', reserved: false, pin: false });
    expect(decide(['SELECT * FROM t WHERE id = $1'], 'read_write', true)).toMatchObject({ kind: 'run', role: 'primary' });
  });

  it.each([
    ['INSERT INTO t VALUES (1)', { write: true, reserved: false }],
    ['SELECT * FROM t FOR UPDATE', { write: true }],
    ['BEGIN', { reserved: true, pin: false }],
    ['SET search_path = app', { reserved: true, pin: true }],
    ['LISTEN events', { pin: true }],
    ['DECLARE c CURSOR WITH HOLD FOR SELECT 1', { pin: true }],
  ])('%s runs on the primary', (sql, flags) => {
    expect(decide([sql])).toMatchObject({ kind: 'run', role: 'primary', ...flags });
  });

  it('lets only replica-safe reads be pipelined behind other sessions\' reads', () => {
    expect(decide(['SELECT * FROM t WHERE id = $1'])).toMatchObject({ pipelinable: true });
    expect(decide(['SELECT * FROM t WHERE id = $1'], 'read_write', true)).toMatchObject({ role: 'primary', pipelinable: true });
    expect(decide(['SELECT * FROM t WHERE id = $1'], 'read_only')).toMatchObject({ pipelinable: true });
    for (const sql of ['INSERT INTO t VALUES (1)', 'SELECT * FROM t FOR UPDATE', 'BEGIN', 'SET search_path = app', 'LISTEN events', "SELECT nextval('s')", 'SELECT pg_advisory_lock(1)']) {
      expect(decide([sql])).toMatchObject({ kind: 'run', pipelinable: false });
    }
    expect(decide(['BEGIN'], 'read_only')).toMatchObject({ pipelinable: false });
    expect(decide([])).toMatchObject({ pipelinable: false });
  });

  it('takes the most demanding statement of a batch', () => {
    expect(decide(['SELECT 1', 'UPDATE t SET a = 1'])).toMatchObject({ role: 'primary', write: true });
  });

  it('runs COPY on the primary, never pipelined; the read-only listener runs COPY TO STDOUT on a replica and refuses COPY FROM', () => {
    expect(decide(['COPY t FROM STDIN'])).toMatchObject({ kind: 'run', role: 'primary', write: true, pipelinable: false });
    expect(decide(['COPY t TO STDOUT'])).toMatchObject({ kind: 'run', role: 'primary', pipelinable: false });
    expect(decide(["COPY (SELECT * FROM t WHERE a = 'TO STDOUT') TO STDOUT WITH (FORMAT csv)"], 'read_only')).toMatchObject({ kind: 'run', role: 'replica', pipelinable: false });
    expect(decide(['COPY t FROM STDIN'], 'read_only')).toMatchObject({ kind: 'refuse', reason: 'read_only' });
    expect(decide(["COPY t FROM STDIN WHERE a = 'x TO STDOUT'"], 'read_only')).toMatchObject({ kind: 'refuse', reason: 'read_only' });
  });

  it('sends statements of one query to a replica only when each is a replica-safe read', () => {
    expect(decide(['SELECT 1', 'SELECT 2'])).toMatchObject({ kind: 'run', role: 'replica', pin: false });
    expect(decide(['SELECT 1', 'SET search_path = app'])).toMatchObject({ kind: 'run', role: 'primary', pin: true });
    expect(decide(['BEGIN', 'SELECT 1'])).toMatchObject({ kind: 'run', role: 'primary', reserved: true });
    // one text holding several statements (a multi-statement Parse): the primary answers it (42601)
    expect(decide(['SELECT 1; SELECT 2'])).toMatchObject({ kind: 'run', role: 'primary' });
  });

  it('refuses writes on the read-only listener and keeps everything else on replicas', () => {
    expect(decide(['DELETE FROM t'], 'read_only')).toMatchObject({ kind: 'refuse', reason: 'read_only' });
    expect(decide(['SELECT * FROM t FOR SHARE'], 'read_only')).toMatchObject({ kind: 'refuse', reason: 'read_only' });
    expect(decide(['BEGIN'], 'read_only')).toMatchObject({ kind: 'run', role: 'replica', reserved: true });
  });
});
