// The pipeline_depth rule: a fixed N as is; "auto" 1 while nobody waits, then
// min(16, 1 + ceil(waiters / pool size)); a lending under "auto" stays joinable up to the cap.
import { JoinableLendings, type JoinableLending } from './joinable-lendings';
import { AUTO_PIPELINE_MAX_DEPTH, pipelineDepth, pipelineDepthCap, pipelines } from './pipeline-depth';

describe('pipelineDepth', () => {
  it('uses a fixed setting as is, waiters or not', () => {
    expect(pipelineDepth(4, { waiting: 0, size: 2 })).toBe(4);
    expect(pipelineDepth(1, { waiting: 50, size: 2 })).toBe(1);
    expect(pipelines(1)).toBe(false);
    expect(pipelines(4)).toBe(true);
    expect(pipelineDepthCap(4)).toBe(4);
  });

  it('"auto" pipelines nothing while nobody waits and follows the waiters per pooled connection, up to 16', () => {
    expect(pipelineDepth('auto', { waiting: 0, size: 2 })).toBe(1);
    expect(pipelineDepth('auto', { waiting: 1, size: 2 })).toBe(2);
    expect(pipelineDepth('auto', { waiting: 6, size: 2 })).toBe(4);
    expect(pipelineDepth('auto', { waiting: 18, size: 32 })).toBe(2);
    expect(pipelineDepth('auto', { waiting: 1000, size: 4 })).toBe(AUTO_PIPELINE_MAX_DEPTH);
    expect(pipelines('auto')).toBe(true);
    expect(pipelineDepthCap('auto')).toBe(16);
  });

  it('keeps a lending joinable past the current depth until the cap, so a deeper queue can use it', () => {
    const set = new JoinableLendings<string, JoinableLending & { queued: number }>();
    const lent = { joined: 1, queued: 1 };
    set.add('db', lent);
    expect(set.join('db', 2, () => true, 16)).toBe(lent);
    expect(set.join('db', 2, () => true, 16)).toBeUndefined(); // at the current depth: skipped
    expect(set.count()).toBe(1); // but still in the set
    expect(set.join('db', 3, () => true, 16)).toBe(lent); // the waiters grew
    expect(set.join('db', 3, () => true, 3)).toBeUndefined();
  });
});
