// Named statements in transaction mode are prepared once per pooled backend connection and shared
// by every client running the same text (PgBouncer 1.21's max_prepared_statements): node-postgres
// named queries and a raw protocol client over a pool of one connection, LRU eviction at the
// bound, and DEALLOCATE / DISCARD ALL / protocol Close that never remove another client's use.
import { Client, type QueryConfig } from 'pg';
import type { EdgeHarness } from './harness';
import { startTransactionFixture, type TransactionFixture } from './transaction-fixture';
import { errorOf, RawClient, rowsOf } from './raw-client';

jest.setTimeout(90_000);

let edge: EdgeHarness;
let fx: TransactionFixture;

beforeAll(async () => {
  // one pooled connection: whatever a client runs, it runs on the connection the others use
  fx = await startTransactionFixture('pool_max_per_backend = 1\nmax_prepared_statements = 3');
  ({ edge } = fx);
});

afterAll(async () => {
  await fx?.stop();
});

const connect = () => fx.connect();

const named = (name: string, text: string, values: unknown[]): QueryConfig => ({ name, text, values });
const PLUS = 'SELECT $1::int + 1 AS n';

interface Prepared {
  name: string;
  statement: string;
  executions: number;
}

/** The statements the pooled connection holds (the view is per backend session: read through the edge). */
async function preparedOnBackend(c: Client): Promise<Prepared[]> {
  const r = await c.query<Prepared>('SELECT name, statement, (generic_plans + custom_plans)::int AS executions FROM pg_prepared_statements ORDER BY name');
  return r.rows;
}

it('prepares a statement once on the connection and runs every client\'s same text on it', async () => {
  const [a, b] = [await connect(), await connect()];
  try {
    for (let i = 0; i < 3; i++) {
      expect((await a.query(named('from_a', PLUS, [i]))).rows).toEqual([{ n: i + 1 }]);
      expect((await b.query(named('from_b', PLUS, [10 + i]))).rows).toEqual([{ n: 11 + i }]);
    }
    const held = await preparedOnBackend(a);
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ statement: PLUS, executions: 6 });
    expect(held[0].name).toMatch(/^dbproxy_\d+$/);
  } finally {
    await Promise.all([a.end(), b.end()]);
  }
});

it('closes the least recently used statement at max_prepared_statements and re-prepares it when used again', async () => {
  const c = await connect();
  const d = await connect();
  try {
    const texts = [1, 2, 3, 4].map((k) => `SELECT $1::int * ${k} AS n`);
    // 3 on c (its own bound is 3 too), the 4th on d: the connection holds at most 3
    for (const [i, text] of texts.slice(0, 3).entries()) expect((await c.query(named(`s${i}`, text, [5]))).rows).toEqual([{ n: 5 * (i + 1) }]);
    expect((await d.query(named('four', texts[3], [5]))).rows).toEqual([{ n: 20 }]);
    const held = (await preparedOnBackend(c)).map((p) => p.statement);
    expect(held.length).toBeLessThanOrEqual(3);
    expect(held).toContain(texts[3]);
    expect(held).not.toContain(texts[0]); // least recently used went first
    // every statement still runs, prepared again where it was evicted
    for (const [i, text] of texts.slice(0, 3).entries()) expect((await c.query(named(`s${i}`, text, [2]))).rows).toEqual([{ n: 2 * (i + 1) }]);
    expect((await d.query(named('four', texts[3], [2]))).rows).toEqual([{ n: 8 }]);
  } finally {
    await Promise.all([c.end(), d.end()]);
  }
});

it('a protocol Close of one client\'s statement leaves another client\'s use of the same text', async () => {
  const raw = await RawClient.connect(edge.rwPort);
  const other = await connect();
  try {
    await raw.startup({ user: 'app', database: 'postgres' }, 'app-secret');
    expect((await other.query(named('kept', PLUS, [1]))).rows).toEqual([{ n: 2 }]);
    raw.send(
      { type: 'Parse', statement: 'mine', sql: PLUS, paramTypes: [] },
      { type: 'Bind', portal: '', statement: 'mine', paramFormats: [], params: [Buffer.from('41')], resultFormats: [] },
      { type: 'Execute', portal: '', maxRows: 0 },
      { type: 'Close', kind: 'S', name: 'mine' },
      { type: 'Sync' },
    );
    const answers = await raw.untilReady();
    expect(errorOf(answers)).toBeUndefined();
    expect(rowsOf(answers).map((row) => row[0]?.toString())).toEqual(['42']);
    expect(answers.map((m) => m.type)).toContain('CloseComplete');
    // the raw client's statement is gone for it, not for the other client
    raw.send({ type: 'Bind', portal: '', statement: 'mine', paramFormats: [], params: [Buffer.from('1')], resultFormats: [] }, { type: 'Sync' });
    expect(errorOf(await raw.untilReady())).toMatchObject({ code: '26000' });
    expect((await other.query(named('kept', PLUS, [2]))).rows).toEqual([{ n: 3 }]);
    expect((await preparedOnBackend(other)).map((p) => p.statement)).toContain(PLUS);
  } finally {
    raw.close();
    await other.end();
  }
});

it('DEALLOCATE ALL and DISCARD ALL of one client pin its session and never remove another client\'s use', async () => {
  const keeper = await connect();
  expect((await keeper.query(named('k', PLUS, [1]))).rows).toEqual([{ n: 2 }]);
  const dropper = await connect();
  expect((await dropper.query(named('d', PLUS, [1]))).rows).toEqual([{ n: 2 }]);
  await dropper.query('DEALLOCATE ALL');
  // the dropper's own statement still runs on its (now pinned) connection: prepared there again
  expect((await dropper.query(named('d', PLUS, [7]))).rows).toEqual([{ n: 8 }]);
  await dropper.query('DISCARD ALL');
  expect((await dropper.query(named('d', PLUS, [8]))).rows).toEqual([{ n: 9 }]);
  await dropper.end();
  // the pinned connection was closed with its session; the keeper's statement runs on the next one
  expect((await keeper.query(named('k', PLUS, [3]))).rows).toEqual([{ n: 4 }]);
  await keeper.end();
});

it('an unnamed Parse a client repeats runs its own text each time, after other clients used the connection\'s unnamed statement', async () => {
  const raw = await RawClient.connect(edge.rwPort);
  const other = await connect();
  const plusOnce = (value: string) => [
    { type: 'Parse', statement: '', sql: PLUS, paramTypes: [] },
    { type: 'Bind', portal: '', statement: '', paramFormats: [], params: [Buffer.from(value)], resultFormats: [] },
    { type: 'Execute', portal: '', maxRows: 0 },
    { type: 'Sync' },
  ] as const;
  try {
    await raw.startup({ user: 'app', database: 'postgres' }, 'app-secret');
    for (let i = 0; i < 3; i++) {
      raw.send(...plusOnce(String(i)));
      const answers = await raw.untilReady();
      expect(errorOf(answers)).toBeUndefined();
      expect(rowsOf(answers).map((row) => row[0]?.toString())).toEqual([String(i + 1)]);
      // node-postgres's parameterized query is an unnamed Parse too: the one pooled connection's unnamed statement is now its
      expect((await other.query('SELECT $1::text || \'!\' AS t', [`x${i}`])).rows).toEqual([{ t: `x${i}!` }]);
    }
    // a Bind alone, after the repeated Parse: the proxy prepares the client's text again first
    raw.send({ type: 'Bind', portal: '', statement: '', paramFormats: [], params: [Buffer.from('41')], resultFormats: [] }, { type: 'Execute', portal: '', maxRows: 0 }, { type: 'Sync' });
    const bound = await raw.untilReady();
    expect(errorOf(bound)).toBeUndefined();
    expect(rowsOf(bound).map((row) => row[0]?.toString())).toEqual(['42']);
    // a failing unnamed Parse sent twice fails both times, and then nothing is left to Bind to
    const failing = { type: 'Parse', statement: '', sql: 'SELECT n FROM dbproxy_missing_table WHERE n = $1', paramTypes: [] } as const;
    for (let i = 0; i < 2; i++) {
      raw.send(failing, { type: 'Sync' });
      expect(errorOf(await raw.untilReady())).toMatchObject({ code: '42P01' });
    }
    raw.send({ type: 'Bind', portal: '', statement: '', paramFormats: [], params: [Buffer.from('1')], resultFormats: [] }, { type: 'Sync' });
    expect(errorOf(await raw.untilReady())).toMatchObject({ code: '26000' });
    raw.send(...plusOnce('9'));
    expect(rowsOf(await raw.untilReady()).map((row) => row[0]?.toString())).toEqual(['10']);
  } finally {
    raw.close();
    await other.end();
  }
});
