// End to end: a client writes through mysql-edge (autocommit inserts with increasing ids) while the
// simulated RDS switchover runs on real servers (blue read-only, green caught up and promoted, DNS
// flipped at completion) and bgd-monitor + topology + mysql-edge follow it over real NATS.
// Afterwards every acknowledged insert is on green, writes after post-processing reached green only,
// and errors happened only inside the switchover window.
import { mysqlEdgeService } from '@dbproxy/mysql-edge';
import { freePort, promoteReplica, setReadOnly, waitFor, type MariaDbServer } from '@dbproxy/testing';
import { topologyService } from '@dbproxy/topology';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { bgdMonitorService } from '../src';
import { A, backendsA, configToml, deploy, startEstate, type Deployed, type Estate } from './harness';

jest.setTimeout(120_000);

let estate: Estate;
let d: Deployed | undefined;

beforeAll(async () => {
  estate = await startEstate();
});
afterAll(async () => {
  await d?.stop();
  await estate?.stop();
});

interface Attempt {
  readonly id: number;
  readonly at: number;
  readonly ok: boolean;
  readonly error?: string;
}

/** Inserts ids 1, 2, ... through the edge until stopped, reconnecting after a lost connection. */
function writeLoop(port: number): { attempts: Attempt[]; stop(): Promise<void> } {
  const attempts: Attempt[] = [];
  let stopped = false;
  const run = (async () => {
    let conn: Connection | undefined;
    for (let id = 1; !stopped; id++) {
      try {
        conn ??= await createConnection({ host: '127.0.0.1', port, user: 'app', password: 'app-secret', database: 'e2e', connectTimeout: 2_000 });
        await conn.query('INSERT INTO t (id) VALUES (?)', [id]);
        attempts.push({ id, at: Date.now(), ok: true });
      } catch (err) {
        attempts.push({ id, at: Date.now(), ok: false, error: (err as Error).message });
        conn?.destroy();
        conn = undefined;
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    conn?.destroy();
  })();
  return {
    attempts,
    async stop() {
      stopped = true;
      await run;
    },
  };
}

async function ids(server: MariaDbServer): Promise<Set<number>> {
  const c = await createConnection({ host: server.host, port: server.port, user: 'root', password: '' });
  const [rows] = await c.query<RowDataPacket[]>('SELECT id FROM e2e.t');
  await c.end();
  return new Set(rows.map((r) => Number(r['id'])));
}

it('a client writing through mysql-edge keeps one address across a switchover and loses no acknowledged insert', async () => {
  const sim = estate.simA;
  const [green] = estate.a.replicas as [MariaDbServer];
  const c = await createConnection({ host: estate.a.primary.host, port: estate.a.primary.port, user: 'root', password: '' });
  await c.query('CREATE DATABASE e2e');
  await c.query('CREATE TABLE e2e.t (id INT PRIMARY KEY, at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))');
  // the application account has no SUPER (as on RDS): read_only stops its writes
  await c.query("CREATE USER 'orders_app'@'127.0.0.1' IDENTIFIED BY 'orders-pw'");
  await c.query("GRANT ALL ON e2e.* TO 'orders_app'@'127.0.0.1'");
  await c.end();
  await estate.a.waitForReplicaCatchUp();
  await sim.status(A.blue, A.green, 'AVAILABLE');
  const [rw, ro] = [await freePort(), await freePort()];
  const edge = `[[users]]\nname = "app"\npassword = "app-secret"\n[mysql]\nenabled = true\nread_write_listen = "127.0.0.1:${rw}"\nread_only_listen = "127.0.0.1:${ro}"\nmonitor_username = "root"\nmonitor_password = ""\n`;
  const deployment = { name: 'orders', blue_writer: 'orders-blue', blue_readers: ['orders-blue-r1'] };
  const toml = (hosts: Record<string, string>) => configToml(estate.nats.url, hosts, backendsA(sim).map((b) => ({ ...b, extra: 'username = "orders_app"\npassword = "orders-pw"' })), [deployment], edge);
  d = await deploy(estate.nats.url, toml(sim.hosts()), [topologyService, mysqlEdgeService, bgdMonitorService]);
  await d.waitForPhase('orders', 'AVAILABLE');
  const loop = writeLoop(rw);
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const acked = () => loop.attempts.filter((a) => a.ok).length;
  await waitFor(async () => acked() > 50, { timeoutMs: 10_000, description: 'writes flowing to blue' });

  await sim.status(A.blue, A.green, 'SWITCHOVER_INITIATED');
  await d.waitForPhase('orders', 'WRITER_SWITCHOVER_INITIATED');
  await pause(300);
  // RDS: the source stops taking writes, the target catches up and is promoted
  const windowStart = Date.now();
  await setReadOnly(estate.a.primary, true);
  await sim.status(A.blue, A.green, 'SWITCHOVER_IN_PROGRESS');
  await d.waitForPhase('orders', 'WRITER_SWITCHOVER_IN_PROGRESS');
  await estate.a.waitForReplicaCatchUp();
  await promoteReplica(green);
  await sim.status(A.blue, A.green, 'SWITCHOVER_IN_POST_PROCESSING');
  await d.waitForPhase('orders', 'WRITER_SWITCHOVER_POST_PROCESSING');
  const postAt = Date.now();
  const before = acked();
  await waitFor(async () => acked() > before + 50, { timeoutMs: 15_000, description: 'writes flowing again after post-processing' });
  const windowEnd = loop.attempts.find((a) => a.ok && a.at > postAt)?.at ?? Date.now();
  // writer DNS propagation: the stable blue name now answers with the green IP, then completion
  await d.reconfigure(toml(sim.hosts({ [A.blue]: sim.endpoint(A.green).ip })));
  await pause(800);
  await sim.completed(A.green);
  await d.waitForPhase('orders', 'READER_SWITCHOVER_IN_PROGRESS');
  const afterCompletion = acked();
  await waitFor(async () => acked() > afterCompletion + 50, { timeoutMs: 15_000, description: 'writes flowing after writer completion' });
  await sim.empty();
  await d.waitForPhase('orders', 'NONE');
  const afterCleanup = acked();
  await waitFor(async () => acked() > afterCleanup + 50, { timeoutMs: 15_000, description: 'writes flowing after cleanup' });
  await loop.stop();

  const onGreen = await ids(green);
  const onBlue = await ids(estate.a.primary);
  const ok = loop.attempts.filter((a) => a.ok);
  const failed = loop.attempts.filter((a) => !a.ok);
  const lost = ok.filter((a) => !onGreen.has(a.id));
  expect(lost).toEqual([]);
  // writes after post-processing reached green only
  const late = ok.filter((a) => a.at > windowEnd);
  expect(late.length).toBeGreaterThan(100);
  expect(late.filter((a) => onBlue.has(a.id))).toEqual([]);
  // errors only inside the window (blue read-only until the edge moved to green)
  expect(failed.filter((a) => a.at < windowStart || a.at > windowEnd + 50)).toEqual([]);
  process.stdout.write(
    `end-to-end switchover: ${ok.length} acknowledged inserts, all on green; ${failed.length} errors, all within the ${windowEnd - windowStart} ms window ` +
      `(blue read-only to first write on green); first error: ${failed[0]?.error ?? 'none'}\n`,
  );
});
