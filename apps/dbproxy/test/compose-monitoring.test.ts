// docker-compose.yml's monitoring: a Prometheus (real image) that scrapes every instance of every
// dbproxy service on its admin port, and a Grafana (real image) provisioned with a datasource on
// that Prometheus and the dashboard of deploy/grafana. No Docker engine here: `promtool check
// config` checks the scrape file, and the wiring (mounts, ports, service names, uids) is read from
// the files the containers would read.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { processEnvironment } from '@dbproxy/config';
import { adminPortOf, onPath, read, readCompose, ROOT, validConfig, type ComposeService } from './support/manifests';

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

interface ScrapeJob {
  job_name: string;
  dns_sd_configs?: { names: string[]; type?: string; port?: number }[];
  static_configs?: { targets: string[] }[];
}

/** The host file mounted at `target` in `service`. */
function mounted(service: ComposeService, target: string): string | undefined {
  const volume = service.volumes?.find((v) => v.split(':')[1] === target);
  return volume?.split(':')[0]?.replace(/^\.\//, '');
}

/** The service whose image is `repository:<tag>` (never built here). */
function serviceRunning(repository: string): [string, ComposeService] {
  const found = Object.entries(services).filter(([, s]) => s.image?.startsWith(`${repository}:`));
  expect(found.map(([name, s]) => [name, s.build, /:[0-9v][\w.-]*$/.test(s.image ?? '')])).toEqual([[expect.any(String), undefined, true]]);
  return found[0] as [string, ComposeService];
}

describe('docker-compose.yml: Prometheus scrapes every dbproxy service', () => {
  const [prometheusName, prometheus] = serviceRunning('prom/prometheus');
  const configFlag = prometheus.command?.find((a) => a.startsWith('--config.file='))?.slice('--config.file='.length) as string;
  const file = mounted(prometheus, configFlag) as string;

  it('mounts its scrape configuration from deploy/, and promtool check config passes', () => {
    expect(configFlag).toBeDefined();
    expect(existsSync(join(ROOT, file))).toBe(true);
    expect(onPath('promtool')).toBe(true); // .ci/run installs it (Debian: prometheus)
    const result = spawnSync('promtool', ['check', 'config', join(ROOT, file)], { encoding: 'utf8' });
    expect([result.status, `${result.stdout}${result.stderr}`]).toEqual([0, expect.stringContaining('SUCCESS')]);
  });

  it("has one job per dbproxy service, on its admin port, finding every instance through Docker's DNS", () => {
    const jobs = (parseYaml(read(file)) as { scrape_configs: ScrapeJob[] }).scrape_configs;
    const dbproxyServices = Object.entries(services).filter(([, s]) => s.command?.[0] === 'start').map(([name]) => name);
    expect(dbproxyServices.length).toBe(7);
    for (const name of dbproxyServices) {
      const job = jobs.find((j) => j.dns_sd_configs?.some((d) => d.names.includes(name)));
      // an A query on the service name answers one record per container, so `--scale` adds targets
      expect({ name, sd: job?.dns_sd_configs }).toEqual({ name, sd: [{ names: [name], type: 'A', port: adminPortOf(config, name) }] });
    }
    expect(jobs.flatMap((j) => j.static_configs ?? [])).toEqual([]);
  });

  it('is what Grafana\'s provisioned datasource points at', () => {
    const [, grafana] = serviceRunning('grafana/grafana');
    const provisioning = mounted(grafana, '/etc/grafana/provisioning') as string;
    const datasources = readdirSync(join(ROOT, provisioning, 'datasources')).flatMap((f) => (parseYaml(read(join(provisioning, 'datasources', f))) as { datasources: { type: string; uid: string; url: string }[] }).datasources);
    const port = Number(/--web\.listen-address=.*:(\d+)/.exec(prometheus.command?.join(' ') ?? '')?.[1] ?? 9090);
    expect(datasources.filter((d) => d.type === 'prometheus').map((d) => d.url)).toEqual([`http://${prometheusName}:${port}`]);
    expect(grafana.depends_on).toEqual([prometheusName]);
  });
});

describe('docker-compose.yml: Grafana shows the dbproxy dashboard', () => {
  const [, grafana] = serviceRunning('grafana/grafana');
  const provisioning = mounted(grafana, '/etc/grafana/provisioning') as string;

  it("mounts deploy/grafana's provisioning and dashboards where the dashboard provider reads them", () => {
    expect(provisioning).toBe('deploy/grafana/provisioning');
    const providers = readdirSync(join(ROOT, provisioning, 'dashboards')).flatMap((f) => (parseYaml(read(join(provisioning, 'dashboards', f))) as { providers: { type: string; options: { path: string } }[] }).providers);
    expect(providers.length).toBeGreaterThan(0);
    for (const provider of providers) {
      expect(provider.type).toBe('file');
      const host = mounted(grafana, provider.options.path) as string;
      expect(host).toBe('deploy/grafana/dashboards');
      expect(readdirSync(join(ROOT, host)).filter((f) => f.endsWith('.json'))).toContain('dbproxy-overview.json');
    }
  });

  it('gives every panel a datasource uid that provisioning creates', () => {
    const uids = readdirSync(join(ROOT, provisioning, 'datasources')).flatMap((f) => (parseYaml(read(join(provisioning, 'datasources', f))) as { datasources: { uid: string }[] }).datasources.map((d) => d.uid));
    const dashboard = JSON.parse(read('deploy/grafana/dashboards/dbproxy-overview.json')) as { panels: { title: string; datasource?: { uid: string }; targets: { datasource?: { uid: string } }[] }[] };
    const used = dashboard.panels.flatMap((p) => [p.datasource?.uid, ...p.targets.map((t) => t.datasource?.uid)].filter((u): u is string => u !== undefined).map((uid) => `${p.title}: ${uid}`));
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((u) => !uids.some((uid) => u.endsWith(`: ${uid}`)))).toEqual([]);
  });

  it('has only expressions Prometheus parses (promtool check rules, Grafana\'s interval variables filled in)', () => {
    const dashboard = JSON.parse(read('deploy/grafana/dashboards/dbproxy-overview.json')) as { panels: { targets: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m')));
    expect(exprs.length).toBeGreaterThan(10);
    const dir = mkdtempSync(join(tmpdir(), 'dbproxy-dashboard-rules-'));
    try {
      const rules = join(dir, 'rules.yml');
      writeFileSync(rules, JSON.stringify({ groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:expr_${i}`, expr })) }] }));
      const result = spawnSync('promtool', ['check', 'rules', rules], { encoding: 'utf8' });
      expect([result.status, `${result.stdout}${result.stderr}`]).toEqual([0, expect.stringContaining('SUCCESS')]);
      // and a broken expression fails, so the check above means something
      writeFileSync(rules, JSON.stringify({ groups: [{ name: 'dashboard', rules: [{ record: 'dashboard:broken', expr: 'sum by (le (rate(x[5m]))' }] }] }));
      expect(spawnSync('promtool', ['check', 'rules', rules], { encoding: 'utf8' }).status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('publishes the UI on 3000, asks for an admin password and lets anonymous users only view', () => {
    expect(grafana.ports).toEqual(['3000:3000']);
    expect(grafana.environment?.['GF_SECURITY_ADMIN_PASSWORD']).toMatch(/^\$\{GRAFANA_ADMIN_PASSWORD:\?.+\}$/);
    expect(grafana.environment?.['GF_AUTH_ANONYMOUS_ORG_ROLE']).toBe('Viewer');
    const without = spawnSync('docker-compose', ['-f', join(ROOT, 'docker-compose.yml'), 'config', '-q'], { encoding: 'utf8', cwd: ROOT, env: { ...processEnvironment(), DBPROXY_ADMIN_TOKEN: 'compose-test-admin-token', GRAFANA_ADMIN_PASSWORD: '' } });
    expect([without.status, without.stderr]).toEqual([1, expect.stringContaining('set GRAFANA_ADMIN_PASSWORD')]);
  });
});
