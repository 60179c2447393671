// Reading the deployment files as the tools would: docker-compose.yml with YAML merge keys, k8s/
// rendered by `kubectl kustomize` (or, without kubectl, the kustomization's resources with its
// namespace applied — the only transformation it uses), and dbproxy configurations validated as
// the services would validate them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { configuredListeners, formatIssue, parseToml, validateDocument, type DbproxyConfig } from '@dbproxy/config';

export const ROOT = join(__dirname, '..', '..', '..', '..');
export const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

export function onPath(binary: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function validConfig(toml: string, env: Record<string, string>): DbproxyConfig {
  const parsed = parseToml(toml);
  if (!parsed.ok) throw new Error(parsed.issues.map(formatIssue).join('\n'));
  const result = validateDocument(parsed.document, env);
  if (!result.ok) throw new Error(result.issues.map(formatIssue).join('\n'));
  return result.config;
}

/** Ports a service listens on: its own listeners plus its admin port. */
export function portsOf(config: DbproxyConfig, service: string): number[] {
  const adminKey = service.replace('-', '_');
  return configuredListeners(config)
    .filter((l) => l.path === `proxy.admin.${adminKey}` || (service === 'config-api' && l.path === 'config_api.listen') || (service === 'pg-edge' && l.path.startsWith('postgres.')) || (service === 'redis-edge' && l.path.startsWith('redis.')) || (service === 'mysql-edge' && l.path.startsWith('mysql.')))
    .map((l) => Number(l.address.slice(l.address.lastIndexOf(':') + 1)));
}

/** The admin port of one service (`[proxy.admin] <service>`). */
export function adminPortOf(config: DbproxyConfig, service: string): number {
  const listener = configuredListeners(config).find((l) => l.path === `proxy.admin.${service.replace('-', '_')}`);
  if (!listener) throw new Error(`no admin listener for ${service}`);
  return Number(listener.address.slice(listener.address.lastIndexOf(':') + 1));
}

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  ports?: (string | { target: number; published?: number | string })[];
  expose?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  container_name?: string;
  depends_on?: unknown;
}

export function readCompose(text = read('docker-compose.yml')): { services: Record<string, ComposeService> } {
  return parseYaml(text, { merge: true }) as { services: Record<string, ComposeService> };
}

/** The image every dbproxy service of docker-compose.yml runs (the one with `build: .`). */
export function composeDbproxyImage(compose = readCompose()): string {
  const built = Object.values(compose.services).filter((s) => s.build !== undefined);
  const images = [...new Set(built.map((s) => s.image))];
  if (images.length !== 1 || !images[0]) throw new Error(`services built from the Dockerfile use ${images.length} image names: ${images.join(', ')}`);
  return images[0];
}

// --- Kubernetes ----------------------------------------------------------------------------------
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- each check reads the fields of its kind
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

function parseDocs(text: string, origin: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((d) => {
    if (d.errors.length > 0) throw new Error(`${origin}: ${d.errors.map((e) => e.message).join('; ')}`);
    const json = d.toJSON() as K8sObject | null;
    return json ? [json] : [];
  });
}

/** The objects `kubectl apply -k <dir>` would send. */
export function renderKustomization(dir = join(ROOT, 'k8s')): K8sObject[] {
  if (onPath('kubectl')) return parseDocs(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }), 'kubectl kustomize');
  const kustomization = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { namespace?: string; resources: string[]; [key: string]: unknown };
  const unsupported = Object.keys(kustomization).filter((k) => !['apiVersion', 'kind', 'namespace', 'resources'].includes(k));
  if (unsupported.length > 0) throw new Error(`kubectl is needed to render kustomization fields ${unsupported.join(', ')}`);
  return kustomization.resources.flatMap((file) =>
    parseDocs(readFileSync(join(dir, file), 'utf8'), file).map((o) =>
      o.kind === 'Namespace' || !kustomization.namespace ? o : { ...o, metadata: { ...o.metadata, namespace: kustomization.namespace } },
    ),
  );
}

export function selects(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = key in labels;
    if (operator === 'In' && !(has && values.includes(labels[key] as string))) return false;
    if (operator === 'NotIn' && has && values.includes(labels[key] as string)) return false;
    if (operator === 'Exists' && !has) return false;
    if (operator === 'DoesNotExist' && has) return false;
  }
  return true;
}
