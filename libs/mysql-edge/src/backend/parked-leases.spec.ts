// Parked connections: taken over by a session that finds no idle one, returned by the sweep.
import type { Lease } from '@dbproxy/pool';
import type { BackendConnection } from './backend-connection';
import { ParkedLeases, type ConnectionPool, type ParkedHolder } from './parked-leases';

function holder(parkedAt: number, log: string[], name: string, needsReset = false, retiring = false): ParkedHolder {
  const pool = { release: () => void log.push(`${name} released to the pool`) };
  const lease = { released: false, retiring, backend: 'db', connection: { needsReset }, pool } as unknown as Lease<BackendConnection>;
  return {
    parkedAt,
    surrender: () => {
      log.push(`${name} surrendered`);
      return lease;
    },
    giveBack: (reason) => void log.push(`${name} gave back (${reason})`),
  };
}

describe('ParkedLeases', () => {
  const pool = { backend: 'db' } as ConnectionPool;
  const other = { backend: 'other' } as ConnectionPool;

  it('never hands over a connection that must be reset first: it goes back to the pool', () => {
    const parked = new ParkedLeases();
    const log: string[] = [];
    parked.park(pool, holder(0, log, 'a', true));
    expect(parked.steal(pool, holder(0, log, 'b'))).toBeUndefined();
    expect(log).toEqual(['a surrendered', 'a released to the pool']);
  });

  it('never hands over a connection a drain retired after it was parked: its release closes it, the taker gets the next one', () => {
    const parked = new ParkedLeases();
    const log: string[] = [];
    parked.park(pool, holder(0, log, 'drained', false, true));
    parked.park(pool, holder(0, log, 'fresh'));
    expect(parked.steal(pool, holder(0, log, 'b'))).toBeDefined();
    expect(log).toEqual(['drained surrendered', 'drained released to the pool', 'fresh surrendered']);
  });

  it('refuses to park a retiring lease (the local pool return takes no retired connection)', () => {
    expect(ParkedLeases.mayPark({ retiring: true } as Lease<BackendConnection>)).toBe(false);
    expect(ParkedLeases.mayPark({ retiring: false } as Lease<BackendConnection>)).toBe(true);
  });

  it('hands a parked connection of the same pool to another session, never to its holder', () => {
    const parked = new ParkedLeases();
    const log: string[] = [];
    const a = holder(0, log, 'a');
    parked.park(pool, a);
    expect(parked.steal(pool, a)).toBeUndefined();
    expect(parked.steal(other, holder(0, log, 'b'))).toBeUndefined();
    expect(parked.steal(pool, holder(0, log, 'b'))).toBeDefined();
    expect(log).toEqual(['a surrendered']);
    expect(parked.steal(pool, holder(0, log, 'c'))).toBeUndefined();
  });

  it('returns connections parked before the sweep time, and all of a backend on retire', () => {
    const parked = new ParkedLeases();
    const log: string[] = [];
    parked.park(pool, holder(100, log, 'old'));
    parked.park(pool, holder(900, log, 'new'));
    parked.park(other, holder(50, log, 'elsewhere'));
    parked.sweep(500);
    expect(log).toEqual(['old gave back (parked-idle)', 'elsewhere gave back (parked-idle)']);
    parked.giveBackAll('db');
    expect(log).toContain('new gave back (retired)');
    expect(parked.counts().get('db')).toBe(2); // holders unpark themselves in giveBack; these fakes do not
  });
});
