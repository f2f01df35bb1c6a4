import { badRequest, invalid } from './api-status.js';
import { isJsonObject, sameJson } from './object-patch.js';
import type { ResourceType } from './resource-types.js';
import type { StoredObject } from './stored-object.js';

type JsonObject = Record<string, unknown>;

/**
 * What the API server itself adds to or checks in an object on a write, for the fields a
 * client that compares its desired spec with the stored one would meet: Secrets' stringData
 * folded into base64 `data` and `type` Opaque; Services' type, ports, session affinity and an
 * allocated clusterIP (kept on updates that leave it out, immutable); Jobs' counts, selector
 * and template labels (the template immutable). A subset: Pods get no spec defaults, and
 * CNPG's own defaulting webhook is not imitated, so compare only the fields you set.
 */
export class ServerDefaults {
  private clusterIps = 0;
  private nodePorts = 0;

  /** Applies the defaults of `type` to `object` (changed in place); `previous` on updates. */
  apply(type: ResourceType, object: StoredObject, previous?: StoredObject): void {
    if (type.kind === 'Secret') secretDefaults(type, object, previous);
    if (type.kind === 'Service') this.serviceDefaults(type, object, previous);
    if (type.kind === 'Job') jobDefaults(type, object, previous);
  }

  /** The status the registry gives a new object (the client's is ignored), or none. */
  initialStatus(type: ResourceType): JsonObject | undefined {
    if (type.kind === 'Namespace') return { phase: 'Active' };
    if (type.kind === 'Service') return { loadBalancer: {} };
    if (type.kind === 'Pod') return { phase: 'Pending' };
    return undefined;
  }

  private serviceDefaults(type: ResourceType, object: StoredObject, previous?: StoredObject) {
    const spec = specOf(object);
    const before = previous ? specOf(previous) : {};
    spec.type ??= 'ClusterIP';
    spec.sessionAffinity ??= 'None';
    spec.internalTrafficPolicy ??= 'Cluster';
    const ports = Array.isArray(spec.ports) ? (spec.ports as JsonObject[]) : [];
    for (const port of ports) {
      port.protocol ??= 'TCP';
      port.targetPort ??= port.port;
    }
    if (spec.type === 'ExternalName') return;
    if (spec.clusterIP === undefined && before.clusterIP !== undefined) {
      spec.clusterIP = before.clusterIP;
      spec.clusterIPs = before.clusterIPs;
    }
    if (before.clusterIP !== undefined && !sameJson(spec.clusterIP, before.clusterIP))
      throw invalid(type, object.metadata.name, [
        `spec.clusterIP: Invalid value: ${JSON.stringify(spec.clusterIP)}: field is immutable`,
      ]);
    spec.clusterIP ??= `10.96.${Math.floor(++this.clusterIps / 250)}.${(this.clusterIps % 250) + 1}`;
    spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
      spec.externalTrafficPolicy ??= 'Cluster';
      const earlier = Array.isArray(before.ports) ? (before.ports as JsonObject[]) : [];
      for (const port of ports) {
        const same = earlier.find((p) => p.port === port.port && p.protocol === port.protocol);
        port.nodePort ??= same?.nodePort ?? 30000 + (this.nodePorts++ % 2768);
      }
    }
  }
}

function specOf(object: StoredObject): JsonObject {
  if (!isJsonObject(object.spec)) object.spec = {};
  return object.spec as JsonObject;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function secretDefaults(type: ResourceType, object: StoredObject, previous?: StoredObject) {
  const data = isJsonObject(object.data) ? object.data : {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value !== 'string' || !BASE64.test(value))
      throw badRequest(`Secret in version "v1" cannot be handled: data.${key} is not base64`);
  }
  if (isJsonObject(object.stringData)) {
    for (const [key, value] of Object.entries(object.stringData))
      data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  }
  delete object.stringData;
  if (Object.keys(data).length > 0) object.data = data;
  object.type ??= 'Opaque';
  if (previous && previous.type !== object.type)
    throw invalid(type, object.metadata.name, [
      `type: Invalid value: ${JSON.stringify(object.type)}: field is immutable`,
    ]);
}

function jobDefaults(type: ResourceType, object: StoredObject, previous?: StoredObject) {
  const spec = specOf(object);
  spec.parallelism ??= 1;
  spec.completions ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.manualSelector ??= false;
  const uid = object.metadata.uid;
  const controllerLabels = {
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': object.metadata.name,
    'controller-uid': uid,
    'job-name': object.metadata.name,
  };
  spec.selector ??= { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
  const template = isJsonObject(spec.template) ? spec.template : (spec.template = {});
  const metadata = isJsonObject(template.metadata) ? template.metadata : (template.metadata = {});
  metadata.labels = {
    ...(isJsonObject(metadata.labels) ? metadata.labels : {}),
    ...controllerLabels,
  };
  if (previous && !sameJson(template, specOf(previous).template))
    throw invalid(type, object.metadata.name, [
      'spec.template: Invalid value: the template: field is immutable',
    ]);
}
