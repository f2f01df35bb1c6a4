import type { Manifest } from './manifests.js';

// NetworkPolicy's meaning, as Kubernetes documents it, over the rendered objects of an
// overlay: what a connection needs to pass both its source's egress policies and its
// destination's ingress policies. The checks ask it who reaches what.

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: { port?: number | string; endPort?: number; protocol?: string }[];
}

interface NetworkPolicy extends Manifest {
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
}

/** A pod (its namespace and labels) or an address outside the cluster. */
export type Endpoint = { namespace: string; labels: Record<string, string> } | { address: string };

/** The namespace objects are in when they name none (the overlays put theirs in pgcloud). */
const DEFAULT_NAMESPACE = 'pgcloud';

export class PolicyModel {
  private readonly policies: NetworkPolicy[];
  private readonly namespaceLabels = new Map<string, Record<string, string>>();

  /** `namespaces`: the labels of namespaces the overlay does not make (the users'). */
  constructor(
    objects: readonly Manifest[],
    namespaces: Record<string, Record<string, string>> = {},
  ) {
    this.policies = objects.filter((o): o is NetworkPolicy => o.kind === 'NetworkPolicy');
    for (const [name, labels] of Object.entries(namespaces)) this.namespaceLabels.set(name, labels);
    for (const o of objects)
      if (o.kind === 'Namespace')
        this.namespaceLabels.set(o.metadata.name, o.metadata.labels ?? {});
  }

  /** Whether a TCP connection from `from` to `to` on `port` gets through. */
  allows(from: Endpoint, to: Endpoint, port: number): boolean {
    return this.egressAllows(from, to, port) && this.ingressAllows(from, to, port);
  }

  private egressAllows(from: Endpoint, to: Endpoint, port: number): boolean {
    if (!('namespace' in from)) return true;
    const selecting = this.selecting(from, 'Egress');
    if (selecting.length === 0) return true;
    return selecting.some((policy) =>
      (policy.spec.egress ?? []).some((rule) =>
        this.ruleAllows(rule, rule.to, policyNamespace(policy), to, port),
      ),
    );
  }

  private ingressAllows(from: Endpoint, to: Endpoint, port: number): boolean {
    if (!('namespace' in to)) return true;
    const selecting = this.selecting(to, 'Ingress');
    if (selecting.length === 0) return true;
    return selecting.some((policy) =>
      (policy.spec.ingress ?? []).some((rule) =>
        this.ruleAllows(rule, rule.from, policyNamespace(policy), from, port),
      ),
    );
  }

  /** The policies of a pod's namespace that select it for `type`. */
  private selecting(pod: { namespace: string; labels: Record<string, string> }, type: string) {
    return this.policies.filter(
      (policy) =>
        policyNamespace(policy) === pod.namespace &&
        policyTypes(policy).includes(type) &&
        matches(policy.spec.podSelector, pod.labels),
    );
  }

  private ruleAllows(
    rule: PolicyRule,
    peers: PolicyPeer[] | undefined,
    namespace: string,
    other: Endpoint,
    port: number,
  ): boolean {
    const portOk =
      !rule.ports ||
      rule.ports.length === 0 ||
      rule.ports.some(
        (p) =>
          (p.protocol ?? 'TCP') === 'TCP' &&
          (p.port === undefined ||
            (typeof p.port === 'number' && port >= p.port && port <= (p.endPort ?? p.port))),
      );
    if (!portOk) return false;
    if (!peers || peers.length === 0) return true;
    return peers.some((peer) => this.peerMatches(peer, namespace, other));
  }

  private peerMatches(peer: PolicyPeer, namespace: string, other: Endpoint): boolean {
    if (peer.ipBlock) {
      // Pods are not matched by address: their addresses come and go.
      if (!('address' in other)) return false;
      const { cidr, except = [] } = peer.ipBlock;
      return inCidr(other.address, cidr) && !except.some((c) => inCidr(other.address, c));
    }
    if (!('namespace' in other)) return false;
    const namespaceOk = peer.namespaceSelector
      ? matches(peer.namespaceSelector, this.labelsOfNamespace(other.namespace))
      : other.namespace === namespace;
    return namespaceOk && (!peer.podSelector || matches(peer.podSelector, other.labels));
  }

  private labelsOfNamespace(name: string): Record<string, string> {
    return {
      ...(this.namespaceLabels.get(name) ?? {}),
      'kubernetes.io/metadata.name': name,
    };
  }
}

function policyNamespace(policy: NetworkPolicy): string {
  return policy.metadata.namespace ?? DEFAULT_NAMESPACE;
}

function policyTypes(policy: NetworkPolicy): string[] {
  if (policy.spec.policyTypes) return policy.spec.policyTypes;
  return policy.spec.egress ? ['Ingress', 'Egress'] : ['Ingress'];
}

/** Whether `labels` meet a label selector (an empty one selects everything). */
export function matches(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = key in labels;
    const ok =
      operator === 'In'
        ? has && values.includes(labels[key] ?? '')
        : operator === 'NotIn'
          ? !has || !values.includes(labels[key] ?? '')
          : operator === 'Exists'
            ? has
            : operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

/** Whether an IPv4 address is within a CIDR. */
export function inCidr(address: string, cidr: string): boolean {
  const [base = '', bits = '32'] = cidr.split('/');
  const size = Number(bits);
  const mask = size === 0 ? 0 : (~0 << (32 - size)) >>> 0;
  return (ipv4(address) & mask) >>> 0 === (ipv4(base) & mask) >>> 0;
}

function ipv4(address: string): number {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`not an IPv4 address: ${address}`);
  return parts.reduce((n, p) => n * 256 + p, 0);
}
