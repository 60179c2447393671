// Transaction mode's process-wide bound on held result bytes ([postgres] max_buffered_result_bytes):
// concurrent large results through node-postgres fail closed with 53200 over it, the edge's
// dbproxy_pg_buffered_result_bytes gauge returns to 0 after the load, and sessions go on.
import { metricValue } from '@dbproxy/runtime/testing';
import { waitFor } from '@dbproxy/testing';
import type { EdgeHarness } from './harness';
import { startTransactionFixture, type TransactionFixture } from './transaction-fixture';

jest.setTimeout(90_000);

let edge: EdgeHarness;
let fx: TransactionFixture;

beforeAll(async () => {
  // each session may hold 8 MB, all of them together 12 MB
  fx = await startTransactionFixture('pool_max_per_backend = 8\nmax_result_bytes = 8000000\nmax_buffered_result_bytes = 12000000\nmax_result_rows = 1000000');
  ({ edge } = fx);
});

afterAll(async () => {
  await fx?.stop();
});

const connect = () => fx.connect();

/** About 5 MB of rows (5000 rows of 1000 bytes), produced slowly enough that the results overlap. */
const LARGE = "SELECT g, repeat('x', 1000) AS filler, pg_sleep(CASE WHEN g % 1000 = 0 THEN 0.1 ELSE 0 END) FROM generate_series(1, 5000) g";

it('fails results closed with 53200 while all sessions together hold max_buffered_result_bytes, and gives the bytes back', async () => {
  const clients = await Promise.all(Array.from({ length: 6 }, () => connect()));
  try {
    const outcomes = await Promise.all(
      clients.map((c) =>
        c.query(LARGE).then(
          (r) => ({ ok: true as const, rows: r.rows.length }),
          (err: { code?: string; message: string }) => ({ ok: false as const, code: err.code, message: err.message }),
        ),
      ),
    );
    const failed = outcomes.filter((o) => !o.ok);
    const served = outcomes.filter((o) => o.ok);
    // 6 × 5 MB cannot be held at once under 12 MB: some fail, the rest are whole
    expect(failed.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThan(0);
    for (const o of served) expect(o).toEqual({ ok: true, rows: 5000 });
    for (const o of failed) {
      expect(o).toMatchObject({ code: '53200' });
      expect(o.ok ? '' : o.message).toContain('max_buffered_result_bytes = 12000000');
    }
    // every session goes on, and the bytes came back
    const after = await Promise.all(clients.map((c) => c.query('SELECT 1 AS one')));
    for (const r of after) expect(r.rows).toEqual([{ one: 1 }]);
    await waitFor(async () => metricValue(await edge.metrics(), 'dbproxy_pg_buffered_result_bytes') === 0, { timeoutMs: 5000 });
    // one large result alone fits again
    expect((await clients[0].query(LARGE)).rows).toHaveLength(5000);
    expect(metricValue(await edge.metrics(), 'dbproxy_pg_buffered_result_bytes')).toBe(0);
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
});
