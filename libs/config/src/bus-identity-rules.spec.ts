// [bus.identities] is all four public keys or none; a seed needs its service's public key.
import { validateDocument } from './load';

const base = { users: [] };
const KEY = 'UDEGKURVCYVZMACGVDQ2352NW4437NYNXXEJF5R4P52R343CKXVPYLNL';
const all = { config_api: KEY, bgd_monitor: KEY, mysql_edge: KEY, xa_coordinator: KEY };
const issuesOf = (bus: unknown) => {
  const result = validateDocument({ ...base, bus }, { SEED: 'SUAGNURME4E2XSYOFY26AJDYTWQMAPWF4H5GTPCRKTAPT3NRACAMUWIVRM' });
  return result.ok ? [] : result.issues.map((i) => i.path);
};

describe('bus identity rules', () => {
  it('accepts none, or all four public keys with seeds for some', () => {
    expect(issuesOf({})).toEqual([]);
    expect(issuesOf({ identities: all, signing: { mysql_edge_seed: '${SEED}', max_age_seconds: 10 } })).toEqual([]);
  });

  it('refuses a partial set of public keys, naming the missing ones', () => {
    expect(issuesOf({ identities: { config_api: KEY, bgd_monitor: KEY } })).toEqual(['bus.identities.mysql_edge', 'bus.identities.xa_coordinator']);
  });

  it('refuses a seed without public keys, and a seed given twice', () => {
    expect(issuesOf({ signing: { bgd_monitor_seed_file: '/run/k' } })).toEqual(['bus.signing.bgd_monitor_seed_file']);
    expect(issuesOf({ identities: all, signing: { xa_coordinator_seed: '${SEED}', xa_coordinator_seed_file: '/run/k' } })).toEqual(['bus.signing.xa_coordinator_seed_file']);
  });
});
