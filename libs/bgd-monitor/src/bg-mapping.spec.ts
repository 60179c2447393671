// The blue/green map and the direct-probe tuple (spec 001 "Blue/Green Mapping", "Direct-Probe Tuple").
import { buildMap, directProbeTarget, unmappedReaders } from './bg-mapping';
import type { DeploymentSettings, ServerRef } from './deployment-settings';

const tls = (enabled: boolean) => ({ enabled, use_webpki_roots: true });
const ref = (name: string, host: string, port = 3306, tlsOn = false): ServerRef => ({ name, host, port, shard: 'default', tls: tls(tlsOn), username: `${name}-user`, password: 'pw' });
const BLUE = 'orders.c1.eu.rds.amazonaws.com';
const GREEN = 'orders-green-abc123.c1.eu.rds.amazonaws.com';
const settings = (over: Partial<DeploymentSettings>): DeploymentSettings => ({
  name: 'orders',
  enabled: true,
  writerIsAlsoReader: false,
  baselineMs: 1000,
  timeoutMs: 1000,
  blueWriter: ref('blue', BLUE, 3306, true),
  blueReaders: [ref('blue-r1', 'orders-r1.c1.eu.rds.amazonaws.com'), ref('blue-r2', 'orders-r2.c1.eu.rds.amazonaws.com')],
  greenWriter: undefined,
  greenReaders: [],
  mode: 'automatic',
  checksum: 'x',
  ...over,
});

describe('buildMap', () => {
  it('automatic: maps the blue writer to the target by green naming, readers unmapped; probe uses the blue TLS and account', () => {
    const { pairs, writerProblem } = buildMap(settings({}), GREEN);
    expect(writerProblem).toBeNull();
    expect(pairs.map((p) => [p.kind, p.blue.name, p.greenHost, p.green])).toEqual([['writer', 'blue', GREEN, null]]);
    const writer = pairs[0]!;
    expect(directProbeTarget(writer)).toBeNull();
    writer.greenIp = '10.0.0.9';
    expect(directProbeTarget(writer)).toEqual({ host: '10.0.0.9', port: 3306, serverName: GREEN, tls: tls(true), username: 'blue-user', password: 'pw' });
    expect(unmappedReaders(settings({}), pairs).map((r) => r.name)).toEqual(['blue-r1', 'blue-r2']);
  });

  it('automatic: a target that is not the green name of the blue writer is not mapped', () => {
    expect(buildMap(settings({}), 'billing-green-abc123.c1.eu.rds.amazonaws.com')).toMatchObject({ pairs: [], writerProblem: expect.stringContaining('not the green name') });
  });

  it('explicit: the green writer by exact hostname and the blue port, its TLS for the probe; readers name-matched', () => {
    const s = settings({ mode: 'explicit', greenWriter: ref('green', GREEN, 3306, false), greenReaders: [ref('green-r1', 'orders-r1-green-zzz999.c1.eu.rds.amazonaws.com')] });
    const { pairs } = buildMap(s, GREEN);
    expect(pairs.map((p) => [p.kind, p.blue.name, p.green?.name])).toEqual([['writer', 'blue', 'green'], ['reader', 'blue-r1', 'green-r1']]);
    pairs[0]!.greenIp = '10.0.0.9';
    expect(directProbeTarget(pairs[0]!)).toMatchObject({ tls: tls(false), username: 'green-user', port: 3306 });
    expect(unmappedReaders(s, pairs).map((r) => r.name)).toEqual(['blue-r2']);
    expect(buildMap(settings({ mode: 'explicit', greenWriter: ref('green', GREEN, 3307) }), GREEN)).toMatchObject({ pairs: [], writerProblem: expect.stringContaining('unsupported') });
    expect(buildMap(settings({ mode: 'explicit', greenWriter: undefined }), GREEN)).toMatchObject({ pairs: [], writerProblem: expect.stringContaining('not eligible') });
  });
});
