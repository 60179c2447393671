// kill -9 of the coordinator process at each point of the protocol (held there by the test-only
// fault hook DBPROXY_XA_TEST_FAULT), then a restart on the same journal: recovery leaves both
// participants consistent with the journal, XA RECOVER empty on both, and the requester that was
// waiting got an error, never a false OK. Also a torn tail cut into the last commit record.
import { statSync, truncateSync } from 'node:fs';
import { tmpDir, waitFor, type TempDir } from '@dbproxy/testing';
import { BOTH, clearTables, forgetConfig, ids, rollbackLeftovers, requester, startCoordinator, startParticipants, writeCoordinatorConfig, xaRecover, type CoordinatorProcess, type CoordinatorSetup, type Participants } from './support';

jest.setTimeout(180_000);

interface Case {
  readonly fault: string;
  /** What each participant holds when the coordinator dies: prepared branches (p1, p2). */
  readonly preparedAtKill: [number, number];
  /** Rows on both after recovery: the journal's decision. */
  readonly committed: boolean;
}

const CASES: Case[] = [
  { fault: 'before-prepare', preparedAtKill: [0, 0], committed: false },
  { fault: 'after-prepare:1', preparedAtKill: [1, 0], committed: false },
  { fault: 'after-decision', preparedAtKill: [1, 1], committed: true },
  { fault: 'after-commit:1', preparedAtKill: [0, 1], committed: true },
];

describe('xa-coordinator killed with SIGKILL', () => {
  let p: Participants;
  let dir: TempDir;
  let req: Awaited<ReturnType<typeof requester>>;
  const running: CoordinatorProcess[] = [];

  beforeAll(async () => {
    p = await startParticipants();
    req = await requester(p);
  });
  afterAll(async () => {
    await req?.bus.close();
    await p?.destroy();
  });
  beforeEach(async () => {
    dir = await tmpDir('xa-faults');
    await clearTables(p);
    await forgetConfig(req.bus);
  });
  afterEach(async () => {
    for (const c of running.splice(0)) await c.kill9();
    if (p.p2.pid === undefined) await p.p2.start();
    for (const s of [p.p1, p.p2]) await rollbackLeftovers(s);
    await dir.remove();
  });

  /** Starts a coordinator held at `fault`, sends one insert, kills -9 the process at that point. */
  async function killAt(setup: CoordinatorSetup, fault: string, id: number): Promise<unknown> {
    const c = await startCoordinator(setup, fault);
    running.push(c);
    const answer = req.client.execute({ statement: `INSERT INTO xa_test.items VALUES (${id}, 'x')`, participants: BOTH, deadlineMs: 5000 }).then(
      (ok) => ({ ok }),
      (error: unknown) => ({ error }),
    );
    await waitFor(() => c.output().includes('xa test fault point reached'), { timeoutMs: 20_000, intervalMs: 50, description: `fault point ${fault}` });
    await c.kill9();
    return answer;
  }

  it.each(CASES)('at $fault: the requester gets an error and recovery settles both participants as the journal says', async ({ fault, preparedAtKill, committed }) => {
    const setup = await writeCoordinatorConfig(p, dir.path, 'participant_concurrency = 1');
    const answer = await killAt(setup, fault, 11);
    expect(answer).toMatchObject({ error: { code: 'DBP_ERR_BUS_TIMEOUT' } });
    await waitFor(() => xaRecover(p.p1).length === preparedAtKill[0] && xaRecover(p.p2).length === preparedAtKill[1], { timeoutMs: 15_000, intervalMs: 200, description: 'branches as left at the kill' });
    const restarted = await startCoordinator(setup);
    running.push(restarted);
    expect(xaRecover(p.p1)).toEqual([]);
    expect(xaRecover(p.p2)).toEqual([]);
    const expected = committed ? [11] : [];
    expect(await ids(p.p1)).toEqual(expected);
    expect(await ids(p.p2)).toEqual(expected);
    // the restarted coordinator serves new transactions on the same journal
    const next = await req.client.execute({ statement: "INSERT INTO xa_test.items VALUES (12, 'y')", participants: BOTH, deadlineMs: 5000 });
    expect(next.allConfirmed).toBe(true);
    expect(await ids(p.p1)).toEqual([...expected, 12]);
  });

  it('a torn journal tail (the last commit record cut mid-way) is cut, never misread: presumed abort rolls both back', async () => {
    const setup = await writeCoordinatorConfig(p, dir.path, 'participant_concurrency = 1');
    const before = statSync(setup.journalPath, { throwIfNoEntry: false })?.size;
    expect(before).toBeUndefined();
    const answer = await killAt(setup, 'after-decision', 21);
    expect(answer).toHaveProperty('error');
    const size = statSync(setup.journalPath).size;
    truncateSync(setup.journalPath, size - 5); // the commit record, minus its last bytes
    const restarted = await startCoordinator(setup);
    running.push(restarted);
    expect(restarted.output()).toContain('xa journal: torn tail cut');
    expect(xaRecover(p.p1)).toEqual([]);
    expect(xaRecover(p.p2)).toEqual([]);
    expect(await ids(p.p1)).toEqual([]);
    expect(await ids(p.p2)).toEqual([]);
  });

  it('a participant killed with SIGKILL after the decision: the requester gets the commit, recovery commits that participant once it is back', async () => {
    const setup = await writeCoordinatorConfig(p, dir.path, 'participant_concurrency = 1');
    const c = await startCoordinator(setup, 'after-decision:1:pause=4000');
    running.push(c);
    const answer = req.client.execute({ statement: "INSERT INTO xa_test.items VALUES (31, 'z')", participants: BOTH, deadlineMs: 5000 });
    await waitFor(() => c.output().includes('xa test fault point reached'), { timeoutMs: 20_000, intervalMs: 50, description: 'decision journalled' });
    expect(xaRecover(p.p2)).toHaveLength(1);
    await p.p2.kill();
    const result = await answer;
    expect(result.allConfirmed).toBe(false);
    expect(result.outcomes.map((o) => [o.backend, o.outcome])).toEqual([
      ['p1', 'committed'],
      ['p2', 'unknown'],
    ]);
    expect(await ids(p.p1)).toEqual([31]);
    await p.p2.start();
    await waitFor(async () => xaRecover(p.p2).length === 0 && (await ids(p.p2)).includes(31), { timeoutMs: 15_000, intervalMs: 200, description: 'recovery committed p2' });
    expect(await ids(p.p2)).toEqual([31]);
    expect(xaRecover(p.p1)).toEqual([]);
  });
});
