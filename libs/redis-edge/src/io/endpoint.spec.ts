// The commands replayed on every new backend connection: configured or client credentials,
// RESP3, name, database, READONLY.
import { DEFAULT_STATE, isDefaultState, setupFrames, type NodeEndpoint } from './endpoint';

const endpoint: NodeEndpoint = { key: 'k', name: 'n', shard: 's', address: '127.0.0.1:7000', role: 'primary', db: 0, username: undefined, password: undefined, readOnly: false };
const text = (frames: Buffer[]): string[] => frames.map((f) => f.toString().replace(/\r\n/g, ' ').trim());

describe('connection setup', () => {
  it('sends nothing to an open server for the default state', () => {
    expect(setupFrames(endpoint, DEFAULT_STATE)).toEqual([]);
    expect(isDefaultState(DEFAULT_STATE)).toBe(true);
  });

  it('authenticates with the configured credentials, selects the configured db, and READONLY for replicas', () => {
    expect(text(setupFrames({ ...endpoint, password: 'pw', db: 2, readOnly: true }, DEFAULT_STATE))).toEqual([
      '*3 $4 AUTH $7 default $2 pw',
      '*2 $6 SELECT $1 2',
      '*1 $8 READONLY',
    ]);
  });

  it('replays the client state: its AUTH, HELLO 3, SETNAME and SELECT', () => {
    const state = { protocol: 3 as const, auth: { username: Buffer.from('u'), password: Buffer.from('p') }, db: 4, name: Buffer.from('app') };
    expect(isDefaultState(state)).toBe(false);
    expect(text(setupFrames({ ...endpoint, password: 'configured' }, state))).toEqual(['*7 $5 HELLO $1 3 $4 AUTH $1 u $1 p $7 SETNAME $3 app', '*2 $6 SELECT $1 4']);
    expect(text(setupFrames(endpoint, { ...state, protocol: 2 }))).toEqual(['*3 $4 AUTH $1 u $1 p', '*3 $6 CLIENT $7 SETNAME $3 app', '*2 $6 SELECT $1 4']);
  });
});
