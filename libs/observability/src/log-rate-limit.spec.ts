import { Writable } from 'node:stream';
import { createLogger } from './logging';
import { LogRateLimit } from './log-rate-limit';

describe('LogRateLimit', () => {
  it('admits N lines per kind per second and sums up the rest when the next second starts', () => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({ write: (c: Buffer, _e, done) => (lines.push(...c.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l))), done()) });
    const logger = createLogger({ level: 'info', service: 's', instance: 'i', destination: stream });
    let now = 10_000;
    const limit = new LogRateLimit(logger, () => 3, () => now);
    const admitted = Array.from({ length: 10 }, () => limit.admit('login_failed')).filter(Boolean).length;
    expect(admitted).toBe(3);
    expect(limit.admit('session_opened')).toBe(true); // kinds are counted apart
    now += 1000;
    expect(limit.admit('login_failed')).toBe(true);
    expect(lines).toEqual([expect.objectContaining({ event: 'login_failed', suppressed: 7, msg: 'suppressed 7 similar lines (login_failed)' })]);
    limit.flush();
    expect(lines).toHaveLength(1);
  });

  it('admits everything with a limit of 0', () => {
    const logger = createLogger({ level: 'info', service: 's', instance: 'i', destination: new Writable({ write: (_c, _e, done) => done() }) });
    const limit = new LogRateLimit(logger, () => 0);
    expect(Array.from({ length: 100 }, () => limit.admit('x')).every(Boolean)).toBe(true);
  });
});
