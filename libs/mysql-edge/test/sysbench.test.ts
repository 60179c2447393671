// sysbench through mysql-edge against a real MariaDB primary and replica: oltp_read_write with 32
// threads and prepared statements, zero errors, writes on the primary and reads served by the
// replica (autocommit mode), and the transactional variant pinned to the primary. A short run here;
// `node tools/bench/mysql/bench.cjs --soak` runs the 60 s one.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startMariaDb } from '@dbproxy/testing';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { startEdge, type EdgeHarness } from './harness';

const run = promisify(execFile);
const SECONDS = 10;
jest.setTimeout(120_000 + SECONDS * 2_000);

let db: Awaited<ReturnType<typeof startMariaDb>>;
let edge: EdgeHarness;
let replica: Connection;

async function status(c: Connection, name: string): Promise<number> {
  const [[row]] = await c.query<RowDataPacket[]>('SHOW GLOBAL STATUS LIKE ?', [name]);
  return Number(row?.['Value']);
}

function sysbench(verb: 'prepare' | 'run', extra: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const args = [
    'oltp_read_write',
    '--db-driver=mysql',
    '--mysql-host=127.0.0.1',
    `--mysql-port=${edge.rwPort}`,
    '--mysql-user=app',
    '--mysql-password=app-secret',
    '--mysql-db=sbtest',
    '--tables=2',
    '--table-size=20000',
    ...extra,
    verb,
  ];
  return run('sysbench', args, { timeout: (SECONDS + 90) * 1000, maxBuffer: 16 * 1024 * 1024 });
}

/**
 * The counts of a sysbench report. Any other error aborts sysbench (non-zero exit, so the run
 * rejects); "ignored errors" are the deadlocks and lock-wait timeouts sysbench retries.
 */
function report(stdout: string): { transactions: number; errors: number; queries: number } {
  const number = (label: RegExp) => Number(label.exec(stdout)?.[1] ?? Number.NaN);
  return { transactions: number(/transactions:\s+(\d+)/), errors: number(/ignored errors:\s+(\d+)/), queries: number(/queries:\s+(\d+)/) };
}

beforeAll(async () => {
  db = await startMariaDb({ replicas: 1 });
  const r = db.replicas[0]!;
  edge = await startEdge(
    [
      { name: 'primary', host: db.primary.host, port: db.primary.port, role: 'primary', extra: 'reserved_pool = 8' },
      { name: 'replica', host: r.host, port: r.port, role: 'replica' },
    ],
    'read_after_write_seconds = 0\npool_max_per_backend = 40',
  );
  const primary = await createConnection({ host: db.primary.host, port: db.primary.port, user: 'root' });
  await primary.query('CREATE DATABASE sbtest');
  await primary.end();
  replica = await createConnection({ host: r.host, port: r.port, user: 'root' });
  await sysbench('prepare', ['--threads=2']);
  await db.waitForReplicaCatchUp();
});

afterAll(async () => {
  await replica?.end();
  await edge?.stop();
  await db?.destroy();
});

it(`oltp_read_write, 32 threads, ${SECONDS} s, autocommit: zero errors, reads served by the replica`, async () => {
  const replicaSelects = await status(replica, 'Com_stmt_execute');
  const replicaReads = await edge.metric('dbproxy_mysql_queries_total', { route: 'replica', backend: 'replica' });
  const primaryWrites = await edge.metric('dbproxy_mysql_queries_total', { route: 'primary', backend: 'primary' });
  // Without transactions sysbench's DELETE + INSERT of one random id races between threads (1062
  // duplicate key, on a direct connection too), so the autocommit run keeps the updates only.
  const { stdout } = await sysbench('run', ['--threads=32', `--time=${SECONDS}`, '--skip_trx=on', '--delete_inserts=0', '--report-interval=0', '--rand-type=uniform']);
  const result = report(stdout);
  expect(result.errors).toBe(0);
  expect(result.transactions).toBeGreaterThan(10);
  const reads = (await edge.metric('dbproxy_mysql_queries_total', { route: 'replica', backend: 'replica' })) - replicaReads;
  const writes = (await edge.metric('dbproxy_mysql_queries_total', { route: 'primary', backend: 'primary' })) - primaryWrites;
  // per event: 14 reads (10 point selects, 4 ranges) and 2 writes (an index and a non-index update)
  expect(reads).toBeGreaterThanOrEqual(result.transactions * 14);
  expect(writes).toBeGreaterThanOrEqual(result.transactions * 2);
  // ... and the replica itself executed them
  expect((await status(replica, 'Com_stmt_execute')) - replicaSelects).toBeGreaterThanOrEqual(result.transactions * 14);
  process.stdout.write(`sysbench oltp_read_write autocommit ${SECONDS}s: ${result.transactions} tx, ${result.queries} queries, ${result.errors} errors; replica reads ${reads}, primary writes ${writes}\n`);
});

it('oltp_read_write in transactions: pinned to the primary from BEGIN to COMMIT, no failed run (retried deadlocks under 1 %)', async () => {
  const pins = await edge.metric('dbproxy_mysql_pins_total', { cause: 'transaction' });
  const { stdout } = await sysbench('run', ['--threads=32', `--time=${Math.max(3, Math.round(SECONDS / 2))}`, '--report-interval=0']);
  const result = report(stdout);
  // 32 threads updating the same rows in transactions deadlock now and then (1213, on a direct
  // connection too); sysbench retries those. Anything else would have aborted the run.
  expect(result.errors).toBeLessThanOrEqual(Math.ceil(result.transactions / 100));
  expect(result.transactions).toBeGreaterThan(10);
  expect((await edge.metric('dbproxy_mysql_pins_total', { cause: 'transaction' })) - pins).toBeGreaterThanOrEqual(result.transactions);
  process.stdout.write(`sysbench oltp_read_write transactions: ${result.transactions} tx, ${result.errors} errors\n`);
});
