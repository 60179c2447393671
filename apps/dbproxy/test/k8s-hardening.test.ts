// k8s/ as `kubectl apply -k k8s/` would send it, checked for what a real cluster needs: admin
// ports only on ClusterIP Services and only from the namespace, SIGTERM after the pod left the
// endpoints, disruption budgets for the edges, locked-down containers, a headless Service for
// each StatefulSet, and worker counts that follow the container's CPU limit.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLOSE_GRACE_MS, DRAIN_LATENESS_MS, RUNTIME_CLOSE_MS, usableCpus } from '@dbproxy/runtime';
import { admitted } from './support/network-policy';
import { fromSeed } from 'nkeys.js';
import { composeDbproxyImage, read, renderKustomization, selects, validConfig, type K8sObject } from './support/manifests';

interface Container {
  name: string;
  image: string;
  args: string[];
  ports?: { containerPort: number; name?: string }[];
  securityContext?: Record<string, unknown> & { capabilities?: { drop?: string[] } };
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
  resources?: { limits?: { cpu?: string | number } };
  readinessProbe?: unknown;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: Container[]; securityContext?: Record<string, unknown>; terminationGracePeriodSeconds?: number; volumes?: { name: string; emptyDir?: unknown }[] };
}

const EDGES = ['mysql-edge', 'pg-edge', 'redis-edge'];
const objects = renderKustomization();
const namespace = 'dbproxy';
const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
const configMap = ofKind('ConfigMap').find((o) => o.metadata.name === 'dbproxy-config');
const secret = ofKind('Secret').find((o) => o.metadata.name === 'dbproxy-secrets');
const config = validConfig(configMap?.data?.['dbproxy.toml'] ?? '', { ...secret?.stringData, DBPROXY_NATS_USER: 'pg-edge', DBPROXY_NATS_PASSWORD: 'x' });
const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet');
const template = (w: K8sObject) => w.spec.template as PodTemplate;
const dbproxyWorkloads = workloads.filter((w) => template(w).spec.containers.some((c) => c.image.startsWith('dbproxy:') || c.args?.[0] === 'start'));
const serviceOf = (w: K8sObject) => template(w).spec.containers[0]?.args[1] as string;
const adminPorts = (w: K8sObject) => template(w).spec.containers.flatMap((c) => (c.ports ?? []).filter((p) => p.name === 'admin').map((p) => p.containerPort));
const allAdminPorts = new Set(dbproxyWorkloads.flatMap(adminPorts));
const servicesFor = (w: K8sObject) => ofKind('Service').filter((s) => selects({ matchLabels: s.spec.selector }, template(w).metadata.labels));
const targetOf = (w: K8sObject, port: { port: number; targetPort?: number | string }) => {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  return template(w).spec.containers.flatMap((c) => c.ports ?? []).find((p) => p.name === target)?.containerPort;
};

describe('k8s/ rendered', () => {
  it('renders the dbproxy workloads, all in the dbproxy namespace', () => {
    expect(dbproxyWorkloads.map(serviceOf).sort()).toEqual(['bgd-monitor', 'config-api', 'mysql-edge', 'pg-edge', 'redis-edge', 'topology', 'xa-coordinator']);
    for (const o of objects) if (o.kind !== 'Namespace') expect([o.kind, o.metadata.name, o.metadata.namespace]).toEqual([o.kind, o.metadata.name, namespace]);
    expect(allAdminPorts.size).toBe(7);
  });

  it('runs the image docker-compose.yml builds', () => {
    const image = composeDbproxyImage();
    for (const w of dbproxyWorkloads) for (const c of template(w).spec.containers) expect([w.metadata.name, c.image]).toEqual([w.metadata.name, image]);
    // the README says how to build and tag it
    expect(read('README.md').includes(`docker build -t ${image} .`)).toBe(true);
  });
});

describe('admin ports', () => {
  it.each(dbproxyWorkloads.map((w) => [w.metadata.name, w] as const))('%s: its admin port is on a ClusterIP Service of its own, never on a LoadBalancer or NodePort', (_name, w) => {
    const services = servicesFor(w);
    for (const admin of adminPorts(w)) {
      const exposing = services.filter((s) => (s.spec.ports as { port: number; targetPort?: number | string }[]).some((p) => targetOf(w, p) === admin));
      expect(exposing.length).toBeGreaterThan(0);
      for (const s of exposing) {
        expect([s.metadata.name, s.spec.type ?? 'ClusterIP']).toEqual([s.metadata.name, 'ClusterIP']);
        // its own Service: nothing but admin ports on it
        for (const p of s.spec.ports as { port: number; targetPort?: number | string }[]) expect(allAdminPorts).toContain(targetOf(w, p));
      }
    }
    for (const s of services.filter((x) => x.spec.type === 'LoadBalancer' || x.spec.type === 'NodePort')) {
      for (const p of s.spec.ports as { port: number; targetPort?: number | string; name?: string }[]) {
        expect(allAdminPorts.has(targetOf(w, p) as number)).toBe(false);
        expect(allAdminPorts.has(p.port)).toBe(false);
      }
    }
  });

  it.each(dbproxyWorkloads.map((w) => [w.metadata.name, w] as const))('%s: the NetworkPolicy admits its admin port from the namespace only, and its client ports from anywhere', (_name, w) => {
    const pod = { namespace, labels: template(w).metadata.labels };
    for (const c of template(w).spec.containers) {
      for (const p of c.ports ?? []) {
        const fromNamespace = admitted(objects, pod, p.containerPort, p.name, { namespace, podLabels: { app: 'anything' } });
        const fromElsewhere = admitted(objects, pod, p.containerPort, p.name, { namespace: 'other', podLabels: pod.labels });
        const fromOutside = admitted(objects, pod, p.containerPort, p.name, {});
        expect([p.containerPort, fromNamespace]).toEqual([p.containerPort, true]);
        const isAdmin = allAdminPorts.has(p.containerPort);
        expect([p.containerPort, fromElsewhere, fromOutside]).toEqual([p.containerPort, !isAdmin, !isAdmin]);
      }
    }
  });
});

describe('shutdown and disruptions', () => {
  const shutdownSeconds = config.proxy.shutdown_timeout_seconds;
  const runtimeOverrunSeconds = (DRAIN_LATENESS_MS + CLOSE_GRACE_MS + RUNTIME_CLOSE_MS) / 1000;
  // every Deployment behind a Service with more than one replica: the edges and the config API
  const served = dbproxyWorkloads.filter((w) => w.kind === 'Deployment' && (w.spec.replicas ?? 1) > 1);

  it('covers the edges and the config API', () => {
    expect(served.map((w) => w.metadata.name).sort()).toEqual(['config-api', ...EDGES].sort());
  });

  it.each(served.map((w) => [w.metadata.name, w] as const))('%s: a preStop pause lets the pod leave the endpoints before SIGTERM, inside the grace period', (_name, w) => {
    const spec = template(w).spec;
    for (const c of spec.containers) {
      const preStop = c.lifecycle?.preStop;
      const pause = preStop?.sleep?.seconds ?? (preStop?.exec?.command[0] === 'sleep' ? Number(preStop.exec.command[1]) : 0);
      expect(pause).toBeGreaterThanOrEqual(5);
      expect(c.readinessProbe).toBeDefined();
      // the pause, the drain and the runtime's overrun budget all fit before SIGKILL
      expect(spec.terminationGracePeriodSeconds ?? 30).toBeGreaterThanOrEqual(pause + shutdownSeconds + runtimeOverrunSeconds);
    }
  });

  it.each(EDGES)('%s: a PodDisruptionBudget keeps an edge serving through voluntary disruptions without blocking them', (edge) => {
    const w = dbproxyWorkloads.find((x) => x.metadata.name === edge) as K8sObject;
    const budgets = ofKind('PodDisruptionBudget').filter((b) => selects(b.spec.selector, template(w).metadata.labels));
    expect(budgets).toHaveLength(1);
    const budget = budgets[0] as K8sObject;
    expect(budget.apiVersion).toBe('policy/v1');
    const hpa = ofKind('HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef.name === edge);
    const fewest = Number(hpa?.spec.minReplicas ?? w.spec.replicas ?? 1);
    expect(fewest).toBeGreaterThanOrEqual(2);
    if (budget.spec.maxUnavailable !== undefined) {
      expect(Number(budget.spec.maxUnavailable)).toBeGreaterThanOrEqual(1);
      expect(Number(budget.spec.maxUnavailable)).toBeLessThan(fewest);
    } else {
      expect(Number(budget.spec.minAvailable)).toBeGreaterThanOrEqual(1);
      expect(Number(budget.spec.minAvailable)).toBeLessThan(fewest);
    }
  });
});

describe('containers', () => {
  it.each(dbproxyWorkloads.map((w) => [w.metadata.name, w] as const))('%s: non-root, read-only root filesystem, no privilege escalation, writable /tmp from an emptyDir', (_name, w) => {
    const spec = template(w).spec;
    for (const c of spec.containers) {
      const effective = { ...spec.securityContext, ...c.securityContext };
      expect(effective['runAsNonRoot']).toBe(true);
      if (effective['runAsUser'] !== undefined) expect(effective['runAsUser']).not.toBe(0);
      expect(c.securityContext?.['allowPrivilegeEscalation']).toBe(false);
      expect(c.securityContext?.['readOnlyRootFilesystem']).toBe(true);
      expect(c.securityContext?.['privileged'] ?? false).toBe(false);
      expect(c.securityContext?.capabilities?.drop).toContain('ALL');
      const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect(spec.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
    }
  });

  it.each(EDGES)('%s: workers = 0 follows the CPU limit, which the manifest sets (kubelet writes it to cpu.max)', (edge) => {
    const w = dbproxyWorkloads.find((x) => x.metadata.name === edge) as K8sObject;
    const section = { 'mysql-edge': config.mysql, 'pg-edge': config.postgres, 'redis-edge': config.redis }[edge as 'mysql-edge'];
    expect(section.workers).toBe(0);
    const limit = template(w).spec.containers[0]?.resources?.limits?.cpu;
    expect(limit).toBeDefined();
    const millis = String(limit).endsWith('m') ? Number(String(limit).slice(0, -1)) : Number(limit) * 1000;
    expect(millis).toBeGreaterThan(0);
    const dir = mkdtempSync(join(tmpdir(), 'k8s-cpu-'));
    try {
      const paths = { cpuMax: join(dir, 'cpu.max'), cfsQuota: join(dir, 'q'), cfsPeriod: join(dir, 'p') };
      writeFileSync(paths.cpuMax, `${millis * 100} 100000\n`); // the kubelet's quota for the limit
      expect(usableCpus(paths, 64)).toBe(Math.ceil(millis / 1000));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('StatefulSets', () => {
  it.each(ofKind('StatefulSet').map((s) => [s.metadata.name, s] as const))('%s: its governing Service is headless', (_name, set) => {
    const governing = ofKind('Service').find((s) => s.metadata.name === set.spec.serviceName);
    expect(governing?.spec.clusterIP).toBe('None');
    expect(selects({ matchLabels: governing?.spec.selector }, (set.spec.template as PodTemplate).metadata.labels)).toBe(true);
  });

  it('includes NATS', () => {
    expect(ofKind('StatefulSet').map((s) => s.metadata.name)).toContain('nats');
  });
});

describe('NATS: TLS and one user per service', () => {
  type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
  const envOf = (w: K8sObject) => ((template(w).spec.containers[0] as unknown as { env?: EnvVar[] }).env ?? []);
  const natsSecret = ofKind('Secret').find((o) => o.metadata.name === 'dbproxy-nats-passwords');
  const passwordKey = (service: string) => `NATS_${service.toUpperCase().replaceAll('-', '_')}_PASSWORD`;

  it('gives every dbproxy workload its own NATS user and only its own password', () => {
    expect(dbproxyWorkloads.length).toBe(7);
    for (const w of dbproxyWorkloads) {
      const service = serviceOf(w);
      const env = envOf(w);
      expect({ service, user: env.find((e) => e.name === 'DBPROXY_NATS_USER')?.value }).toEqual({ service, user: service });
      expect(env.find((e) => e.name === 'DBPROXY_NATS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({ name: 'dbproxy-nats-passwords', key: passwordKey(service) });
      expect(natsSecret?.stringData?.[passwordKey(service)]).toMatch(/^[A-Za-z][A-Za-z0-9_-]*$/);
      // the shared secret every container loads must not carry NATS passwords
      expect(Object.keys(secret?.stringData ?? {}).filter((k) => k.startsWith('NATS_'))).toEqual([]);
    }
    expect(config.bus.tls.enabled).toBe(true);
    expect(config.bus.user).toBe('pg-edge');
  });

  it('gives the four signing services only their own seed, from a Secret matching the public keys in the ConfigMap', () => {
    const owners = ['config-api', 'bgd-monitor', 'mysql-edge', 'xa-coordinator'];
    const signing = ofKind('Secret').find((o) => o.metadata.name === 'dbproxy-bus-signing');
    for (const w of dbproxyWorkloads) {
      const service = serviceOf(w);
      const seeds = envOf(w).filter((e) => e.name.endsWith('_SEED'));
      const variable = `DBPROXY_${service.toUpperCase().replaceAll('-', '_')}_SEED`;
      expect({ service, seeds: seeds.map((e) => e.valueFrom?.secretKeyRef) }).toEqual({ service, seeds: owners.includes(service) ? [{ name: 'dbproxy-bus-signing', key: variable }] : [] });
      if (!owners.includes(service)) continue;
      const pair = fromSeed(new TextEncoder().encode(signing?.stringData?.[variable] ?? ''));
      expect({ service, public: pair.getPublicKey() }).toEqual({ service, public: config.bus.identities[service.replaceAll('-', '_') as 'config_api'] });
    }
  });

  it('runs NATS with deploy/nats/nats-server.conf and authorization.conf, TLS mounted', () => {
    const nats = workloads.find((w) => w.metadata.name === 'nats') as K8sObject;
    const container = template(nats).spec.containers[0] as unknown as { args: string[]; envFrom: { secretRef: { name: string } }[] };
    expect(container.args).toEqual(['-c', '/etc/nats/nats-server.conf']);
    expect(container.envFrom).toEqual([{ secretRef: { name: 'dbproxy-nats-passwords' } }]);
    const natsConfig = ofKind('ConfigMap').find((o) => o.metadata.name === 'nats-config');
    expect(natsConfig?.data?.['authorization.conf']?.trim()).toBe(read('deploy/nats/authorization.conf').trim());
    expect(natsConfig?.data?.['nats-server.conf']?.trim()).toBe(read('deploy/nats/nats-server.conf').trim());
    expect(JSON.stringify(template(nats).spec)).toContain('"secretName":"nats-tls"');
  });
});
