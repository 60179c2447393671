// State machines: legal moves change the state and are published; anything else throws and changes nothing.
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Channels } from '@dbproxy/util';
import { IllegalTransition, StateMachine } from './state-machine';

type S = 'idle' | 'busy' | 'closed';
const LEGAL: Record<S, readonly S[]> = { idle: ['busy', 'closed'], busy: ['idle', 'closed'], closed: [] };

describe('StateMachine', () => {
  it('moves along legal transitions and publishes each one', () => {
    const seen: unknown[] = [];
    const listener = (message: unknown) => seen.push(message);
    subscribe(Channels.stateTransition, listener);
    try {
      const m = new StateMachine<S>('session', 'idle', LEGAL);
      m.transition('idle', 'busy', 'query');
      expect(m.state).toBe('busy');
      expect(m.is('busy')).toBe(true);
      expect(seen).toEqual([{ kind: 'session', id: m.id, from: 'idle', to: 'busy', reason: 'query' }]);
    } finally {
      unsubscribe(Channels.stateTransition, listener);
    }
    expect(channel(Channels.stateTransition).hasSubscribers).toBe(false);
  });

  it('refuses a forbidden move and a move from a state it is not in, naming both', () => {
    const m = new StateMachine<S>('backend', 'idle', LEGAL);
    m.transition('idle', 'closed', 'eof');
    expect(() => m.transition('closed', 'busy', 'late query')).toThrow(`backend #${m.id} cannot go from closed (expected closed) to busy: late query`);
    let caught: unknown;
    try {
      m.transition('idle', 'busy', 'stale');
    } catch (err) {
      caught = err;
    }
    expect(IllegalTransition.is(caught)).toBe(true);
    expect(m.state).toBe('closed');
  });

  it('still refuses a forbidden move after cycling through legal ones (the checked moves it remembers)', () => {
    type T = 'a' | 'b' | 'c';
    const table: Record<T, readonly T[]> = { a: ['b'], b: ['a', 'c'], c: [] };
    const m = new StateMachine<T>('cycle', 'a', table);
    for (let i = 0; i < 3; i++) {
      m.transition('a', 'b', 'go');
      m.transition('b', 'a', 'back');
    }
    expect(() => m.transition('a', 'c', 'skip')).toThrow('cannot go from a (expected a) to c');
    expect(m.state).toBe('a');
    m.transition('a', 'b', 'go');
    m.transition('b', 'c', 'end');
    expect(() => m.transition('c', 'a', 'revive')).toThrow('cannot go from c (expected c) to a');
    expect(m.state).toBe('c');
  });
});
