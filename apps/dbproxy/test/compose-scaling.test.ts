// `docker compose up --scale <edge>=N`: no edge publishes a fixed host port (a second instance
// could not bind it), and one haproxy per edge kind owns the documented host ports and finds the
// edge's instances through Docker's DNS. There is no Docker engine here, so docker-compose checks
// the file (`config -q`) and haproxy checks its configuration (`-c`); the rest is read from them.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { processEnvironment } from '@dbproxy/config';
import { fromSeed } from 'nkeys.js';
import { adminPortOf, composeDbproxyImage, onPath, portsOf, read, readCompose, ROOT, validConfig, type ComposeService } from './support/manifests';

const DOCUMENTED: Record<string, [number, number]> = { 'mysql-edge': [6033, 6034], 'pg-edge': [6432, 6433], 'redis-edge': [6380, 6381] };
const HAPROXY_CONFIG = '/usr/local/etc/haproxy/haproxy.cfg';
const compose = readCompose();
const services = compose.services;
const config = validConfig(read('deploy/compose/dbproxy.toml'), {
  DBPROXY_APP_PASSWORD: 'x',
  DBPROXY_NATS_USER: 'mysql-edge',
  DBPROXY_NATS_PASSWORD: 'x',
  DBPROXY_ADMIN_TOKEN: 'compose-test-admin-token',
  MARIADB_ROOT_PASSWORD: 'x',
  POSTGRES_PASSWORD: 'x',
});

/** [host, container] of a `ports` entry; host undefined when Docker picks an ephemeral port. */
function published(entry: NonNullable<ComposeService['ports']>[number]): [string | undefined, number] {
  if (typeof entry === 'object') return [entry.published === undefined ? undefined : String(entry.published), entry.target];
  const parts = String(entry).split(':');
  const container = Number((parts.pop() as string).split('/')[0]);
  const host = parts.pop();
  return [host === undefined || host === '' ? undefined : host, container];
}

interface HaproxySection {
  kind: string;
  name: string;
  lines: string[][];
}
function sections(text: string): HaproxySection[] {
  const out: HaproxySection[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const words = line.split(/\s+/);
    if (/^\S/.test(raw)) out.push({ kind: words[0] as string, name: words[1] ?? '', lines: [] });
    else out[out.length - 1]?.lines.push(words);
  }
  return out;
}

/** The load balancer service in front of an edge: a haproxy whose configuration names the edge. */
function balancerFor(edge: string): [string, ComposeService, string] | undefined {
  for (const [name, service] of Object.entries(services)) {
    if (!/^haproxy:\d/.test(service.image ?? '')) continue;
    const mount = service.volumes?.find((v) => v.split(':')[1] === HAPROXY_CONFIG);
    const host = mount?.split(':')[0];
    if (host && existsSync(join(ROOT, host)) && sections(read(host)).some((s) => s.lines.some((l) => l[0] === 'server-template' && l[3]?.startsWith(`${edge}:`)))) return [name, service, host];
  }
  return undefined;
}

describe('docker-compose.yml scales the edges', () => {
  it('is a valid compose file (docker-compose config)', () => {
    expect(onPath('docker-compose')).toBe(true); // .ci/run installs it (Debian: docker-compose)
    const result = spawnSync('docker-compose', ['-f', join(ROOT, 'docker-compose.yml'), 'config', '-q'], { encoding: 'utf8', cwd: ROOT, env: { ...processEnvironment(), DBPROXY_ADMIN_TOKEN: 'compose-test-admin-token', GRAFANA_ADMIN_PASSWORD: 'compose-test-grafana' } });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('builds one image for every dbproxy service, bgd-monitor and xa-coordinator among them', () => {
    const image = composeDbproxyImage(compose);
    const built = Object.entries(services).filter(([, s]) => s.image === image).map(([name]) => name);
    expect(built.sort()).toEqual(['bgd-monitor', 'config-api', 'mysql-edge', 'pg-edge', 'redis-edge', 'topology', 'xa-coordinator']);
  });

  it.each(Object.keys(DOCUMENTED))('%s publishes no fixed host port and has no container_name', (edge) => {
    const service = services[edge] as ComposeService;
    expect(service.container_name).toBeUndefined();
    for (const entry of service.ports ?? []) expect([entry, published(entry)[0]]).toEqual([entry, undefined]);
  });

  it('publishes no host port twice', () => {
    const hostPorts = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => published(p)[0]).filter((h): h is string => h !== undefined));
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
  });

  describe.each(Object.entries(DOCUMENTED))('%s behind haproxy', (edge, ports) => {
    const found = balancerFor(edge);

    it('has a haproxy service (a real image) owning its documented host ports', () => {
      expect(found).toBeDefined();
      const [, lb] = found as [string, ComposeService, string];
      expect(lb.build).toBeUndefined();
      expect((lb.ports ?? []).map(published).sort()).toEqual(ports.map((p) => [String(p), p]).sort());
      expect(read('README.md').includes(`--scale ${edge}=`)).toBe(true);
    });

    it('passes haproxy -c', () => {
      const [, , file] = found as [string, ComposeService, string];
      expect(onPath('haproxy')).toBe(true); // .ci/run installs it (Debian: haproxy)
      const out = spawnSync('haproxy', ['-c', '-f', join(ROOT, file)], { encoding: 'utf8' });
      expect([out.status, out.stdout + out.stderr]).toEqual([0, expect.stringContaining('Configuration file is valid')]);
    });

    it("binds each documented port and spreads it over the edge's instances found through Docker's DNS, checked on /readyz", () => {
      const [, , file] = found as [string, ComposeService, string];
      const parsed = sections(read(file));
      const listens = portsOf(config, edge);
      const admin = adminPortOf(config, edge);
      const resolvers = parsed.filter((s) => s.kind === 'resolvers');
      const dockerDns = resolvers.filter((r) => r.lines.some((l) => l[0] === 'nameserver' && l[2] === '127.0.0.11:53')).map((r) => r.name);
      expect(dockerDns.length).toBeGreaterThan(0);
      const defaults = parsed.filter((s) => s.kind === 'defaults').flatMap((s) => s.lines.filter((l) => l[0] === 'default-server').flat());
      for (const port of ports) {
        expect(listens).toContain(port);
        const frontend = parsed.find((s) => s.kind === 'frontend' && s.lines.some((l) => l[0] === 'bind' && l[1]?.endsWith(`:${port}`)));
        expect([port, frontend?.name]).toEqual([port, expect.any(String)]);
        const backendName = frontend?.lines.find((l) => l[0] === 'default_backend')?.[1];
        const backend = parsed.find((s) => s.kind === 'backend' && s.name === backendName);
        const template = backend?.lines.find((l) => l[0] === 'server-template');
        // server-template <prefix> <slots> <service>:<port>: one slot per instance the DNS answers with
        expect(template?.[3]).toBe(`${edge}:${port}`);
        expect(Number(template?.[2])).toBeGreaterThanOrEqual(3);
        const options = [...defaults, ...(template ?? [])];
        const resolverName = options[options.indexOf('resolvers') + 1];
        expect(options.includes('resolvers') && dockerDns.includes(resolverName as string)).toBe(true);
        // instances that do not exist yet are not an error at start
        expect(options[options.indexOf('init-addr') + 1]).toBe('none');
        expect(options).toContain('check');
        expect(options[options.indexOf('port') + 1]).toBe(String(admin));
        expect(backend?.lines.some((l) => l.join(' ') === 'option httpchk GET /readyz')).toBe(true);
        const mode = [...parsed.filter((s) => s.kind === 'defaults').flatMap((s) => s.lines), ...(backend?.lines ?? [])].filter((l) => l[0] === 'mode').pop();
        expect(mode?.[1]).toBe('tcp');
      }
    });
  });
});

describe('haproxy -c guards the configuration', () => {
  it('rejects a broken one (so the check above means something)', () => {
    const broken = execFileSync('sh', ['-c', `sed 's/server-template/server-templat/' ${join(ROOT, 'deploy/haproxy/mysql-edge.cfg')} > /tmp/dbproxy-broken-haproxy-$$.cfg && haproxy -c -f /tmp/dbproxy-broken-haproxy-$$.cfg >/dev/null 2>&1; echo $?; rm -f /tmp/dbproxy-broken-haproxy-$$.cfg`], { encoding: 'utf8' });
    expect(Number(broken.trim())).not.toBe(0);
  });
});

describe('NATS: TLS and one user per service', () => {
  const dbproxyServices = Object.entries(services).filter(([, s]) => s.command?.[0] === 'start');
  const variableOf = (value: string | undefined) => /^\$\{([A-Z_]+):-[A-Za-z][A-Za-z0-9_-]*\}$/.exec(value ?? '')?.[1];

  it('gives every dbproxy service its own NATS user and password, the one nats-server has for it', () => {
    expect(dbproxyServices.map(([name]) => name).sort()).toEqual(['bgd-monitor', 'config-api', 'mysql-edge', 'pg-edge', 'redis-edge', 'topology', 'xa-coordinator']);
    const natsEnv = services['nats']?.environment ?? {};
    const seen = new Set<string>();
    for (const [name, service] of dbproxyServices) {
      expect({ name, user: service.environment?.['DBPROXY_NATS_USER'] }).toEqual({ name, user: name });
      const variable = variableOf(service.environment?.['DBPROXY_NATS_PASSWORD']);
      expect(variable).toBe(`NATS_${name.toUpperCase().replaceAll('-', '_')}_PASSWORD`);
      expect(natsEnv[variable as string]).toBe(service.environment?.['DBPROXY_NATS_PASSWORD']);
      seen.add(variable as string);
    }
    expect(seen.size).toBe(dbproxyServices.length);
    expect(config.bus.tls).toMatchObject({ enabled: true, ca_file: '/etc/dbproxy/nats-ca/ca.pem' });
    expect(config.bus.user).toBe('mysql-edge');
  });

  it('signs what the four owning services send: each holds only its own seed, matching the public key every service trusts', () => {
    const owners = ['config-api', 'bgd-monitor', 'mysql-edge', 'xa-coordinator'];
    const seedVar = (name: string) => `DBPROXY_${name.toUpperCase().replaceAll('-', '_')}_SEED`;
    for (const [name, service] of dbproxyServices) {
      const env = service.environment ?? {};
      const seeds = Object.keys(env).filter((k) => k.endsWith('_SEED'));
      expect({ name, seeds }).toEqual({ name, seeds: owners.includes(name) ? [seedVar(name)] : [] });
      // validate the configuration as that container sees it: its own seed expands, the others are empty
      const own = owners.includes(name) ? { [seedVar(name)]: /:-([A-Z0-9]+)\}/.exec(String(env[seedVar(name)]))?.[1] ?? '' } : {};
      const seen = validConfig(read('deploy/compose/dbproxy.toml'), { DBPROXY_APP_PASSWORD: 'x', DBPROXY_ADMIN_TOKEN: 'compose-test-admin-token', MARIADB_ROOT_PASSWORD: 'x', POSTGRES_PASSWORD: 'x', DBPROXY_NATS_USER: name, DBPROXY_NATS_PASSWORD: 'x', ...own });
      const key = name.replaceAll('-', '_') as 'config_api';
      if (owners.includes(name)) {
        const pair = fromSeed(new TextEncoder().encode(seen.bus.signing[`${key}_seed`] as string));
        expect({ name, public: pair.getPublicKey() }).toEqual({ name, public: seen.bus.identities[key] });
      }
    }
    expect(Object.keys(config.bus.identities).sort()).toEqual(['bgd_monitor', 'config_api', 'mysql_edge', 'xa_coordinator']);
  });

  it('runs NATS with the authorization file and TLS', () => {
    const nats = services['nats'] as ComposeService;
    expect(nats.command).toEqual(['-c', '/etc/nats/nats-server.conf']);
    expect(nats.volumes).toEqual(expect.arrayContaining(['./deploy/nats/nats-server.conf:/etc/nats/nats-server.conf:ro', './deploy/nats/authorization.conf:/etc/nats/authorization.conf:ro', 'nats-tls:/etc/nats/tls:ro']));
    expect(read('deploy/nats/nats-server.conf')).toMatch(/tls \{[^}]*cert_file[^}]*\}[\s\S]*include \.\/authorization\.conf/);
  });
});
