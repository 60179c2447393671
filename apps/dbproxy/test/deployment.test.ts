// docker-compose.yml, k8s/ and the Dockerfile cannot run here (no Docker engine), so they are
// checked by construction: YAML parses, every dbproxy container runs a service this build has,
// its configuration validates with the environment the manifest gives it, and every port the
// manifest exposes is one the configuration listens on.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { SERVICES } from '../src/services';
import { composeDbproxyImage, portsOf, read, readCompose, ROOT, validConfig } from './support/manifests';

const serviceNames = SERVICES.map((s) => s.name);

describe('docker-compose.yml', () => {
  const compose = readCompose();
  const dbproxy = Object.entries(compose.services).filter(([, s]) => s.image === composeDbproxyImage());

  it('has NATS, Jaeger with OTLP, the databases and the dbproxy services', () => {
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(['nats', 'jaeger', 'mariadb-primary', 'mariadb-replica', 'postgres-primary', 'postgres-replica', 'redis', 'config-api']),
    );
    expect(compose.services['jaeger']?.environment?.['COLLECTOR_OTLP_ENABLED']).toBe('true');
    expect(dbproxy.length).toBeGreaterThan(0);
  });

  it.each(dbproxy.map(([name, s]) => [name, s] as const))('%s runs a real service on a configuration that validates, exposing its listeners', (name, service) => {
    const [verb, serviceName, flag, configPath] = service.command ?? [];
    expect([verb, flag]).toEqual(['start', '--config']);
    expect(serviceNames).toContain(serviceName);
    const mount = service.volumes?.find((v) => v.split(':')[1] === configPath);
    expect(mount).toBeDefined();
    const hostPath = (mount as string).split(':')[0] as string;
    expect(existsSync(join(ROOT, hostPath))).toBe(true);
    // ${VAR:-default} in compose: the default is what a plain `docker compose up` gives
    const env = Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v).replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1')]));
    const config = validConfig(read(hostPath), env);
    expect(config.bus.nats_url).toBe('nats://nats:4222');
    expect(config.telemetry.otlp_endpoint).toBe('http://jaeger:4318/v1/traces');
    const listens = portsOf(config, String(serviceName));
    for (const port of [...(service.ports ?? []), ...(service.expose ?? [])]) expect(listens).toContain(Number((typeof port === 'object' ? String(port.target) : port).split(':').pop()));
    expect(name).toBe(serviceName);
  });

  it('mounts scripts that exist', () => {
    for (const service of Object.values(compose.services)) {
      for (const volume of service.volumes ?? []) {
        const host = volume.split(':')[0] as string;
        if (host.startsWith('./')) expect(existsSync(join(ROOT, host))).toBe(true);
      }
    }
  });
});

describe('k8s/', () => {
  type Doc = { kind: string; metadata: { name: string }; data?: Record<string, string>; stringData?: Record<string, string>; spec?: Record<string, unknown> };
  const files = readdirSync(join(ROOT, 'k8s')).filter((f) => f.endsWith('.yaml'));
  const docs: Doc[] = files.flatMap((f) =>
    parseAllDocuments(read(join('k8s', f))).map((d) => {
      if (d.errors.length > 0) throw new Error(`${f}: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJSON() as Doc;
    }),
  );
  const secret = docs.find((d) => d.kind === 'Secret');
  const configMap = docs.find((d) => d.kind === 'ConfigMap');

  it('lists every manifest in the kustomization', () => {
    const kustomization = docs.find((d) => (d as unknown as { kind: string }).kind === 'Kustomization') as unknown as { resources: string[] };
    for (const resource of kustomization.resources) expect(files).toContain(resource);
    expect(files.filter((f) => f !== 'kustomization.yaml').sort()).toEqual([...kustomization.resources].sort());
  });

  it('configures every dbproxy Deployment with a real service, a valid configuration and its ports', () => {
    const config = validConfig(configMap?.data?.['dbproxy.toml'] ?? '', { ...secret?.stringData, DBPROXY_NATS_USER: 'u', DBPROXY_NATS_PASSWORD: 'p' });
    const workloads = docs.filter((d) => d.kind === 'Deployment' || d.kind === 'StatefulSet');
    const ours = workloads.filter((d) => JSON.stringify(d).includes('"image":"dbproxy:'));
    expect(ours.length).toBeGreaterThan(0);
    for (const workload of ours) {
      const container = (workload.spec as { template: { spec: { containers: { args: string[]; ports: { containerPort: number }[]; envFrom?: { secretRef: { name: string } }[] }[] } } }).template.spec.containers[0];
      const [verb, service] = container?.args ?? [];
      expect(verb).toBe('start');
      expect(serviceNames).toContain(service);
      expect(container?.envFrom?.[0]?.secretRef.name).toBe(secret?.metadata.name);
      const listens = portsOf(config, String(service));
      for (const { containerPort } of container?.ports ?? []) expect(listens).toContain(containerPort);
    }
  });
});

describe('Dockerfile', () => {
  it('copies only paths that exist', () => {
    const copies = read('Dockerfile')
      .split('\n')
      .filter((l) => /^COPY (?!--from)/.test(l))
      .flatMap((l) => l.split(/\s+/).slice(1, -1));
    expect(copies.length).toBeGreaterThan(3);
    for (const path of copies) expect(existsSync(join(ROOT, path))).toBe(true);
  });
});
