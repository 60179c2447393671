// The xa-coordinator as its own process on real NATS over two real MariaDB primaries: a commit
// lands on both, a participant's error or a stopped participant rolls back everywhere, readiness
// waits for the first recovery pass, and a second coordinator on the same journal refuses to start.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createServer, type Socket } from 'node:net';
import { createBus } from '@dbproxy/bus';
import { startTestRuntime } from '@dbproxy/runtime/testing';
import { freePort, tmpDir, type TempDir } from '@dbproxy/testing';
import { XaClient, xaCoordinatorService } from '../src';
import {
  BOTH,
  clearTables,
  forgetConfig,
  getXa,
  ids,
  query,
  rollbackLeftovers,
  requester,
  spawnCoordinator,
  startCoordinator,
  startParticipants,
  writeCoordinatorConfig,
  xaRecover,
  type CoordinatorProcess,
  type Participants,
} from './support';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..', '..');

describe('xa-coordinator on two MariaDB primaries', () => {
  let p: Participants;
  let dir: TempDir;
  let coordinator: CoordinatorProcess | undefined;
  let req: Awaited<ReturnType<typeof requester>>;

  beforeAll(async () => {
    p = await startParticipants();
    req = await requester(p);
  });
  afterAll(async () => {
    await req?.bus.close();
    await p?.destroy();
  });
  beforeEach(async () => {
    dir = await tmpDir('xa');
    await clearTables(p);
    await forgetConfig(req.bus);
  });
  afterEach(async () => {
    await coordinator?.kill9();
    coordinator = undefined;
    if (p.p2.pid === undefined) await p.p2.start();
    for (const s of [p.p1, p.p2]) await rollbackLeftovers(s);
    await dir.remove();
  });

  it('commits one insert on both participants and leaves nothing in doubt', async () => {
    coordinator = await startCoordinator(await writeCoordinatorConfig(p, dir.path));
    const result = await req.client.execute({ statement: "INSERT INTO xa_test.items VALUES (1, 'a')", participants: BOTH, deadlineMs: 5000 });
    expect(result).toMatchObject({ affectedRows: 2, allConfirmed: true });
    expect(result.xid).toMatch(/^dbpxa\.[0-9a-f]{12}\./);
    expect(result.outcomes.map((o) => o.outcome)).toEqual(['committed', 'committed']);
    expect(await ids(p.p1)).toEqual([1]);
    expect(await ids(p.p2)).toEqual([1]);
    expect(xaRecover(p.p1)).toEqual([]);
    expect(xaRecover(p.p2)).toEqual([]);
    expect((await getXa(coordinator)).in_doubt).toEqual([]);
    const metrics = await (await fetch(`${coordinator.admin}/metrics`)).text();
    expect(metrics).toMatch(/dbproxy_xa_transactions_total\{[^}]*decision="commit"[^}]*\} 1/);
  });

  it("rolls back everywhere when one participant's statement fails (duplicate key), with that participant's error", async () => {
    coordinator = await startCoordinator(await writeCoordinatorConfig(p, dir.path));
    await query(p.p2, "INSERT INTO xa_test.items VALUES (7, 'already')");
    const failure = await req.client.execute({ statement: "INSERT INTO xa_test.items VALUES (7, 'new')", participants: BOTH, deadlineMs: 5000 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'DBP_ERR_XA_ABORTED' });
    const outcomes = (failure as { outcomes: { backend: string; outcome: string; error?: { errno?: number } }[] }).outcomes;
    expect(outcomes.find((o) => o.backend === 'p2')).toMatchObject({ outcome: 'failed', error: { errno: 1062 } });
    expect(outcomes.find((o) => o.backend === 'p1')?.outcome).toBe('rolled-back');
    expect(await ids(p.p1)).toEqual([]);
    expect(await query(p.p2, 'SELECT v FROM xa_test.items')).toEqual([{ v: 'already' }]);
    expect(xaRecover(p.p1)).toEqual([]);
    expect(xaRecover(p.p2)).toEqual([]);
  });

  it('rolls back everywhere when a participant is stopped before PREPARE', async () => {
    coordinator = await startCoordinator(await writeCoordinatorConfig(p, dir.path));
    await p.p2.stop();
    try {
      const failure = await req.client.execute({ statement: "INSERT INTO xa_test.items VALUES (2, 'b')", participants: BOTH, deadlineMs: 5000 }).catch((e: unknown) => e);
      expect(failure).toMatchObject({ code: 'DBP_ERR_XA_ABORTED' });
      const outcomes = (failure as { outcomes: { backend: string; outcome: string; error?: { code: string } }[] }).outcomes;
      expect(outcomes.find((o) => o.backend === 'p2')).toMatchObject({ outcome: 'failed', error: { code: 'DBP_ERR_XA_PARTICIPANT_UNREACHABLE' } });
      expect(await ids(p.p1)).toEqual([]);
      expect(xaRecover(p.p1)).toEqual([]);
    } finally {
      await p.p2.start();
    }
    expect(await ids(p.p2)).toEqual([]);
    expect(xaRecover(p.p2)).toEqual([]);
  });

  it('refuses statements other than one DML statement and unknown participants, with a clear error', async () => {
    coordinator = await startCoordinator(await writeCoordinatorConfig(p, dir.path));
    await expect(req.client.execute({ statement: 'DROP TABLE xa_test.items', participants: BOTH, deadlineMs: 5000 })).rejects.toThrow(/DBP_ERR_XA_STATEMENT_NOT_ALLOWED|exactly one INSERT/);
    await expect(req.client.execute({ statement: 'INSERT INTO xa_test.items VALUES (3, 1)', participants: [{ shard: 's9', backend: 'p1' }], deadlineMs: 5000 })).rejects.toThrow(/not a configured MySQL shard primary/);
    expect(await ids(p.p1)).toEqual([]);
  });

  it('answers 503 on /readyz until the first recovery pass has finished', async () => {
    // a participant that accepts TCP but never greets: its XA RECOVER waits out connect_timeout_seconds (8 s)
    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket));
    const silentPort = await freePort();
    await new Promise<void>((r) => silent.listen(silentPort, '127.0.0.1', r));
    try {
      const backends = `[[mysql_backends]]\nname = "p1"\naddress = "${p.p1.host}:${p.p1.port}"\nrole = "primary"\nshard = "s1"\n[[mysql_backends]]\nname = "far"\naddress = "127.0.0.1:${silentPort}"\nrole = "primary"\nshard = "s2"`;
      coordinator = spawnCoordinator(await writeCoordinatorConfig(p, dir.path, '', backends, 8));
      const seen: number[] = [];
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const res = await fetch(`${coordinator.admin}/readyz`).catch(() => undefined);
        if (res) seen.push(res.status);
        if (res?.status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen).toContain(503);
      expect(seen.at(-1)).toBe(200);
      expect((await getXa(coordinator)) as unknown).toMatchObject({ unreachable: [{ backend: 'far' }] });
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  it('refuses a second coordinator on the same journal with a clear message', async () => {
    const setup = await writeCoordinatorConfig(p, dir.path);
    coordinator = await startCoordinator(setup);
    const second = spawnCoordinator(await writeCoordinatorConfig(p, dir.path));
    const code = await second.exited;
    expect(code).not.toBe(0);
    expect(second.output()).toContain(`XA journal ${setup.journalPath} is in use by another coordinator (pid ${coordinator.child.pid}`);
    // the first one still serves
    const result = await req.client.execute({ statement: "INSERT INTO xa_test.items VALUES (4, 'd')", participants: BOTH, deadlineMs: 5000 });
    expect(result.allConfirmed).toBe(true);
  });

  it('dbproxy xa list shows a foreign prepared branch and dbproxy xa rollback settles it', async () => {
    const setup = await writeCoordinatorConfig(p, dir.path);
    coordinator = await startCoordinator(setup);
    // another transaction manager's branch, prepared and left behind by its (closed) connection
    const { createConnection } = await import('mysql2/promise');
    const conn = await createConnection({ host: p.p1.host, port: p.p1.port, user: 'root', password: '' });
    await conn.query("XA START 'foreign-tm-1'");
    await conn.query("INSERT INTO xa_test.items VALUES (9, 'foreign')");
    await conn.query("XA END 'foreign-tm-1'");
    await conn.query("XA PREPARE 'foreign-tm-1'");
    await conn.end();
    await new Promise((r) => setTimeout(r, 1500)); // a recovery pass ran: it must leave foreign branches alone
    expect(xaRecover(p.p1)).toEqual(['foreign-tm-1']);
    const cli = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin', 'dbproxy'), 'xa', ...args, '--config', setup.configPath], { encoding: 'utf8' });
    const list = cli('list');
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/foreign-tm-1 {2}bqual="" {2}p1 \(shard s1\) {2}another transaction manager {2}age unknown/);
    const rollback = cli('rollback', 'foreign-tm-1');
    expect(rollback.stdout).toContain('rollback foreign-tm-1 bqual="" on p1: done');
    expect(rollback.status).toBe(0);
    expect(xaRecover(p.p1)).toEqual([]);
    expect(await ids(p.p1)).toEqual([]);
    const again = cli('commit', 'foreign-tm-1');
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('no participant holds a prepared branch of foreign-tm-1');
  });

  it('serves dbproxy.xa.execute on the embedded bus when it runs in this process (the all-in-one path)', async () => {
    const adminPort = await freePort();
    const config = `[telemetry]\nlog_level = "warn"\n[proxy.admin]\nxa_coordinator = "127.0.0.1:${adminPort}"\n[mysql.xa]\nenabled = true\njournal_path = "${join(dir.path, 'embedded', 'journal')}"\n[[mysql_backends]]\nname = "p1"\naddress = "${p.p1.host}:${p.p1.port}"\nrole = "primary"\nshard = "s1"\n[[mysql_backends]]\nname = "p2"\naddress = "${p.p2.host}:${p.p2.port}"\nrole = "primary"\nshard = "s2"\n`;
    const test = await startTestRuntime({ name: 'xa-embedded', services: [xaCoordinatorService], config });
    const edgeBus = createBus({ name: 'edge-in-process' });
    try {
      const result = await new XaClient(edgeBus, { requestedBy: 'edge' }).execute({ statement: "INSERT INTO xa_test.items VALUES (5, 'e')", participants: BOTH, deadlineMs: 5000 });
      expect(result.allConfirmed).toBe(true);
      expect(await ids(p.p1)).toEqual([5]);
      expect(await ids(p.p2)).toEqual([5]);
      expect(await test.metric('dbproxy_xa_journal_decisions_total')).toBe(1);
    } finally {
      await edgeBus.close();
      await test.stop();
    }
  });
});
