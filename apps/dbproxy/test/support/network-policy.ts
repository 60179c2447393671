// NetworkPolicy ingress semantics (networking.k8s.io/v1), enough to ask "may this peer reach this
// pod's port": a pod selected by no Ingress policy admits everything; otherwise one rule of one
// policy selecting it must match the port (no ports: every port) and the peer (no from: every
// peer; podSelector alone: pods of the policy's namespace; namespaceSelector: pods of matching
// namespaces, ANDed with a podSelector in the same peer; ipBlock: sources outside the cluster).
import { selects, type K8sObject, type LabelSelector } from './manifests';

export interface Peer {
  /** the namespace of the source pod, or undefined for a source outside the cluster */
  readonly namespace?: string;
  readonly podLabels?: Record<string, string>;
}

interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string };
}
interface PolicyRule {
  from?: PolicyPeer[];
  ports?: { port?: number | string; protocol?: string }[];
}

function isIngressPolicy(policy: K8sObject): boolean {
  const types = policy.spec?.policyTypes as string[] | undefined;
  return types ? types.includes('Ingress') : true;
}

function peerMatches(rulePeer: PolicyPeer, peer: Peer, policyNamespace: string): boolean {
  if (rulePeer.ipBlock) return peer.namespace === undefined;
  if (peer.namespace === undefined) return false;
  const namespaceOk = rulePeer.namespaceSelector ? selects(rulePeer.namespaceSelector, { 'kubernetes.io/metadata.name': peer.namespace }) : peer.namespace === policyNamespace;
  const podOk = rulePeer.podSelector ? selects(rulePeer.podSelector, peer.podLabels ?? {}) : true;
  return namespaceOk && podOk;
}

function portMatches(rule: PolicyRule, port: number, portName: string | undefined): boolean {
  if (!rule.ports || rule.ports.length === 0) return true;
  return rule.ports.some((p) => (p.protocol ?? 'TCP') === 'TCP' && (p.port === undefined || p.port === port || (portName !== undefined && p.port === portName)));
}

export function admitted(objects: K8sObject[], pod: { namespace: string; labels: Record<string, string> }, port: number, portName: string | undefined, peer: Peer): boolean {
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy' && o.metadata.namespace === pod.namespace && isIngressPolicy(o) && selects(o.spec?.podSelector ?? {}, pod.labels));
  if (policies.length === 0) return true;
  return policies.some((policy) =>
    ((policy.spec?.ingress ?? []) as PolicyRule[]).some(
      (rule) => portMatches(rule, port, portName) && (!rule.from || rule.from.length === 0 || rule.from.some((p) => peerMatches(p, peer, pod.namespace))),
    ),
  );
}
