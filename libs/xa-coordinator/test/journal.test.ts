// The decision journal on a real file: durability order, group commit, torn tails, compaction,
// and the single-writer lock (here and across processes).
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tmpDir, type TempDir } from '@dbproxy/testing';
import { DecisionJournal, decodeRecords } from '../src';

const branches = [{ shard: 's1', backend: 'p1', bqual: '0' }];

describe('DecisionJournal', () => {
  let dir: TempDir;
  beforeEach(async () => {
    dir = await tmpDir('xa-journal');
  });
  afterEach(async () => dir.remove());

  it('has every commit decision on disk when recordCommit resolves, and reopens with the same coordinator id', async () => {
    const path = join(dir.path, 'j', 'journal');
    const j = await DecisionJournal.open(path);
    await j.recordCommit({ xid: 'x1', branches, at: 1 });
    const onDisk = decodeRecords(readFileSync(path));
    expect(onDisk.records.map((r) => r.t)).toEqual(['journal', 'commit']);
    const id = j.coordinatorId;
    await j.close();
    const again = await DecisionJournal.open(path);
    expect(again.coordinatorId).toBe(id);
    expect(again.decision('x1')).toMatchObject({ xid: 'x1', branches });
    await again.close();
  });

  it('group commit: decisions queued while an fsync runs share the next one; off: one fsync each', async () => {
    for (const groupCommit of [true, false]) {
      const j = await DecisionJournal.open(join(dir.path, `g-${groupCommit}`), { groupCommit });
      await Promise.all(Array.from({ length: 50 }, (_, i) => j.recordCommit({ xid: `x${i}`, branches, at: i })));
      const stats = j.statistics();
      expect(stats.durableRecords).toBe(50);
      if (groupCommit) expect(stats.fsyncs).toBeLessThanOrEqual(3);
      else expect(stats.fsyncs).toBe(50);
      await j.close();
    }
  });

  it('cuts a torn tail (a record cut mid-way) and keeps every whole record before it', async () => {
    const path = join(dir.path, 'torn');
    const j = await DecisionJournal.open(path);
    await j.recordCommit({ xid: 'kept', branches, at: 1 });
    const before = statSync(path).size;
    await j.recordCommit({ xid: 'torn', branches, at: 2 });
    await j.close();
    truncateSync(path, before + 11); // mid-record: header and 3 payload bytes
    const torn: string[] = [];
    const again = await DecisionJournal.open(path, { onTornTail: (reason) => torn.push(reason) });
    expect(torn).toEqual([`partial record at byte ${before}`]);
    expect(again.decision('kept')).toBeDefined();
    expect(again.decision('torn')).toBeUndefined();
    expect(statSync(path).size).toBe(before);
    await again.recordCommit({ xid: 'after', branches, at: 3 });
    await again.close();
    appendFileSync(path, Buffer.from([0, 0, 0]));
    const third = await DecisionJournal.open(path);
    expect(third.openDecisions().map((d) => d.xid)).toEqual(['kept', 'after']);
    await third.close();
  });

  it('compacts settled transactions away', async () => {
    const path = join(dir.path, 'compact');
    const j = await DecisionJournal.open(path, { compactAfterDone: 10 });
    for (let i = 0; i < 30; i++) {
      await j.recordCommit({ xid: `x${i}`, branches, at: i });
      if (i !== 7) await j.recordDone(`x${i}`);
    }
    await j.recordCommit({ xid: 'last', branches, at: 99 });
    expect(j.statistics().compactions).toBeGreaterThanOrEqual(2);
    await j.close();
    const records = decodeRecords(readFileSync(path)).records;
    expect(records.length).toBeLessThan(25);
    const again = await DecisionJournal.open(path);
    expect(again.openDecisions().map((d) => d.xid).sort()).toEqual(['last', 'x7']);
    await again.close();
  });

  it('refuses a second writer: in this process, and in another live process', async () => {
    const path = join(dir.path, 'locked');
    const j = await DecisionJournal.open(path);
    await expect(DecisionJournal.open(path)).rejects.toMatchObject({ code: 'DBP_ERR_XA_JOURNAL_LOCKED' });
    await j.close();
    // a lock left by another live process on this host is honoured
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: holder.pid, host: hostname(), since: 0 }));
    try {
      await expect(DecisionJournal.open(path)).rejects.toThrow(new RegExp(`in use by another coordinator \\(pid ${holder.pid} on`));
    } finally {
      holder.kill('SIGKILL');
    }
    await new Promise((r) => holder.once('exit', r));
    // a lock whose process is gone (a coordinator killed with SIGKILL) is taken over
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), since: 0 }));
    const taken = await DecisionJournal.open(path);
    await taken.close();
  });
});
