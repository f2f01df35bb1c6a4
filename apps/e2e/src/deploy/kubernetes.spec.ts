import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { SERVICE_CALLS } from '@pgcloud/contracts';
import type { Container, Manifest, PodSpec, Workload } from './manifests.js';
import type { Grant } from './rbac-grants.js';
import { grantsTo } from './rbac-grants.js';
import {
  KUBERNETES_DIR,
  ROOT,
  appWorkloads,
  label,
  parseManifests,
  render,
  schemaProblems,
  settings,
  workloads,
} from './manifests.js';

const APPS = Object.keys(SERVICE_CALLS).sort();
const STATELESS = APPS.filter((app) => app !== 'database-provisioner');
const MANAGEMENT_PORT = 9090;
const APP_UID = 10001;

/** How long the job runner waits for running jobs when it stops, from its code. */
function jobRunnerStopSeconds(): number {
  const code = readFileSync(join(ROOT, 'libs', 'jobs', 'src', 'job-runner.ts'), 'utf8');
  const ms = /stopTimeoutMs \?\? ([\d_]+)/.exec(code)?.[1];
  assert.ok(ms, 'libs/jobs/src/job-runner.ts has a default stopTimeoutMs');
  return Number(ms.replaceAll('_', '')) / 1000;
}

function containersOf(pod: PodSpec): Container[] {
  return [...(pod.initContainers ?? []), ...pod.containers];
}

/** What is missing from a container for a restricted, probed, sized pod. */
function containerProblems(
  workload: Workload,
  container: Container,
  withToken: ReadonlySet<string>,
): string[] {
  const where = `${label(workload)} ${container.name}`;
  const pod = workload.spec.template.spec;
  const problems: string[] = [];
  const context = { ...pod.securityContext, ...container.securityContext };
  const expect = (ok: boolean, what: string): void => {
    if (!ok) problems.push(`${where}: ${what}`);
  };
  expect(container.securityContext?.runAsNonRoot === true, 'runAsNonRoot');
  expect(typeof context.runAsUser === 'number' && context.runAsUser > 0, 'runAsUser not 0');
  expect(container.securityContext?.readOnlyRootFilesystem === true, 'readOnlyRootFilesystem');
  expect(container.securityContext?.allowPrivilegeEscalation === false, 'no privilege escalation');
  expect(container.securityContext?.capabilities?.drop?.includes('ALL') === true, 'drops ALL');
  expect(!container.securityContext?.capabilities?.add?.length, 'adds no capability');
  expect(context.seccompProfile?.type === 'RuntimeDefault', 'seccomp RuntimeDefault');
  expect(pod.securityContext?.runAsNonRoot === true, 'pod runAsNonRoot');
  expect(container.livenessProbe !== undefined, 'a liveness probe');
  expect(container.readinessProbe !== undefined, 'a readiness probe');
  for (const kind of ['requests', 'limits'] as const)
    for (const resource of ['cpu', 'memory'])
      expect(container.resources?.[kind]?.[resource] !== undefined, `${kind}.${resource}`);
  if (withToken.has(workload.metadata.name))
    expect(pod.automountServiceAccountToken === true, 'its service account token');
  else expect(pod.automountServiceAccountToken === false, 'no service account token');
  expect(pod.serviceAccountName === workload.metadata.name, 'its own ServiceAccount');
  return problems;
}

/** What an app's container lacks: the pgcloud image's user, probes and stop sequence. */
function appProblems(workload: Workload, settingsMap: Record<string, string>): string[] {
  const app = workload.metadata.name;
  const pod = workload.spec.template.spec;
  const [container, ...others] = pod.containers;
  assert.ok(container && others.length === 0, `${app} runs one container`);
  const problems: string[] = [];
  const expect = (ok: boolean, what: string): void => {
    if (!ok) problems.push(`${app}: ${what}`);
  };
  expect(
    /(^|\/)pgcloud(:|$)/.test(container.image ?? ''),
    `the pgcloud image (${container.image})`,
  );
  expect(container.env?.some((v) => v.name === 'APP' && v.value === app) === true, `APP=${app}`);
  expect(container.securityContext?.runAsUser === APP_UID, `runAsUser ${APP_UID}`);
  expect(container.securityContext?.runAsGroup === APP_UID, `runAsGroup ${APP_UID}`);
  const management = container.ports?.find((port) => port.name === 'management');
  expect(management?.containerPort === MANAGEMENT_PORT, `port management ${MANAGEMENT_PORT}`);
  expect(settingsMap['MANAGEMENT_PORT'] === String(MANAGEMENT_PORT), 'MANAGEMENT_PORT set');
  expect(settingsMap['MANAGEMENT_HOST'] === '0.0.0.0', 'MANAGEMENT_HOST=0.0.0.0');
  for (const [probe, path] of [
    [container.livenessProbe, '/livez'],
    [container.readinessProbe, '/readyz'],
  ] as const) {
    const get = probe?.httpGet;
    expect(
      get?.path === path && (get.port === 'management' || get.port === MANAGEMENT_PORT),
      `a probe GET ${path} on the management port`,
    );
  }
  const envFrom = container.envFrom ?? [];
  expect(
    envFrom.some((source) => source.configMapRef?.name.startsWith('pgcloud-settings')),
    'the settings ConfigMap',
  );
  // Its Secret as files, read through *_FILE settings: no secret in the environment.
  expect(!envFrom.some((source) => source.secretRef), 'no Secret in its environment');
  const secretVolume = pod.volumes?.find((v) => v.secret?.secretName === `${app}-secrets`);
  expect(secretVolume?.secret?.defaultMode === 0o440, `its Secret ${app}-secrets, mode 0440`);
  const secretMount = container.volumeMounts?.find((m) => m.name === secretVolume?.name);
  expect(secretMount?.readOnly === true, `its Secret mounted read-only`);
  const files = (container.env ?? []).filter((v) => v.name.endsWith('_FILE'));
  for (const setting of ['DATABASE_URL', 'RABBITMQ_URL'])
    expect(
      files.some((v) => v.name === `${setting}_FILE`),
      `${setting}_FILE (from its Secret)`,
    );
  for (const file of files)
    expect(
      !!secretMount && file.value === `${secretMount.mountPath}/${file.name.slice(0, -5)}`,
      `${file.name} names its key in the Secret's folder`,
    );
  const preStop = container.lifecycle?.preStop?.exec?.command ?? [];
  const delay = preStop[0] === 'sleep' ? Number(preStop[1]) : 0;
  expect(delay > 0, 'a preStop delay');
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  expect(grace > delay + jobRunnerStopSeconds(), `a grace period (${grace} s) past the job stop`);
  const tmp = container.volumeMounts?.find((mount) => mount.mountPath === '/tmp');
  const tmpVolume = pod.volumes?.find((volume) => volume.name === tmp?.name);
  expect(tmpVolume?.emptyDir !== undefined, '/tmp on an emptyDir');
  return problems;
}

/**
 * Every object's schema problems and every workload's missing settings. `withToken`: the
 * workloads that talk to the Kubernetes API (their pods mount a ServiceAccount token).
 */
function overlayProblems(
  objects: Manifest[],
  withToken: ReadonlySet<string> = new Set(),
): string[] {
  const settingsMap = settings(objects);
  return [
    ...objects.flatMap(schemaProblems),
    ...workloads(objects).flatMap((workload) =>
      containersOf(workload.spec.template.spec).flatMap((c) =>
        containerProblems(workload, c, withToken),
      ),
    ),
    ...[...appWorkloads(objects).values()].flatMap((w) => appProblems(w, settingsMap)),
  ];
}

function yamlFiles(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yamlFiles(path, found);
    else if (/\.(ya?ml|json)$/.test(entry.name)) found.push(path);
  }
  return found;
}

interface PolicyPort {
  port?: number;
  endPort?: number;
}

interface NetworkPolicy extends Manifest {
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: string[];
    ingress?: { from?: object[]; ports?: PolicyPort[] }[];
    egress?: { to?: object[]; ports?: PolicyPort[] }[];
  };
}

function networkPolicies(objects: Manifest[]): NetworkPolicy[] {
  return objects.filter((o): o is NetworkPolicy => o.kind === 'NetworkPolicy');
}

for (const overlay of ['dev', 'production']) {
  describe(`deploy/kubernetes/overlays/${overlay}`, () => {
    const objects = render(join(KUBERNETES_DIR, 'overlays', overlay));
    const apps = appWorkloads(objects);
    const config = settings(objects);

    it('renders objects that meet their kind’s schema, with restricted, probed, sized pods', () => {
      assert.deepEqual(overlayProblems(objects), []);
    });

    it('runs every cloud app, the provisioner as one StatefulSet pod with a disk', () => {
      assert.deepEqual([...apps.keys()].sort(), APPS);
      const provisioner = apps.get('database-provisioner');
      assert.equal(provisioner?.kind, 'StatefulSet');
      assert.equal(provisioner.spec.replicas, 1);
      const claims = provisioner.spec.volumeClaimTemplates?.map((t) => t.metadata.name) ?? [];
      const [container] = provisioner.spec.template.spec.containers;
      const dataMount = container?.volumeMounts?.find((m) => m.mountPath === config['DATA_DIR']);
      assert.ok(dataMount && claims.includes(dataMount.name), 'DATA_DIR on a persistent claim');
      const pitr = apps.get('pitr-worker')?.spec.template.spec.containers[0];
      assert.ok(pitr?.volumeMounts?.some((m) => m.mountPath === config['DATA_DIR']));
    });

    it('denies all traffic but what policies allow; only the gateway may take it from anyone', () => {
      const policies = networkPolicies(objects);
      const denyAll = policies.find(
        (p) => Object.keys(p.spec.podSelector).length === 0 && !p.spec.ingress,
      );
      assert.deepEqual(denyAll?.spec.policyTypes, ['Ingress', 'Egress']);
      const openToAll = policies.filter((p) => p.spec.ingress?.some((rule) => !rule.from));
      // The dev overlay's gateway runs the local identity provider: no pod reaches it.
      assert.deepEqual(
        openToAll.map((p) => p.spec.podSelector.matchLabels),
        overlay === 'dev' ? [] : [{ 'app.kubernetes.io/name': 'api-gateway' }],
      );
    });

    it('lets the database servers be reached on DATABASE_PORT_RANGE', () => {
      const [first, last] = (config['DATABASE_PORT_RANGE'] ?? '').split('-').map(Number);
      const policies = networkPolicies(objects).filter((p) =>
        p.metadata.name.startsWith('database-servers'),
      );
      const ports = policies
        .flatMap((p) => [...(p.spec.ingress ?? []), ...(p.spec.egress ?? [])])
        .flatMap((rule) => rule.ports ?? []);
      assert.equal(policies.length, 2, 'the servers take connections, and their clients open them');
      assert.deepEqual(
        ports.map(({ port, endPort }) => ({ port, endPort })),
        ports.map(() => ({ port: first, endPort: last })),
      );
    });

    it('runs notification-service with its own key, delivering to no private address', () => {
      assert.equal(config['WEBHOOK_ALLOW_PRIVATE_TARGETS'], 'false');
      const [container] = apps.get('notification-service')?.spec.template.spec.containers ?? [];
      const files = (container?.env ?? []).map((v) => v.name).filter((n) => n.endsWith('_FILE'));
      assert.deepEqual(files.sort(), [
        'DATABASE_URL_FILE',
        'ENCRYPTION_KEY_FILE',
        'RABBITMQ_URL_FILE',
      ]);
    });

    it('holds no Secret: the Secrets are made where the overlay is applied', () => {
      assert.deepEqual(
        objects.filter((o) => o.kind === 'Secret').map(label),
        [],
        'a rendered Secret',
      );
    });
  });
}

/** What the kubernetes driver's ServiceAccount may do: the kinds and verbs the driver uses. */
const PROVISIONER_GRANTS: Grant[] = [
  { where: 'cluster-wide', resource: 'namespaces', verbs: 'get' },
  { where: 'pgcloud', resource: 'secrets', verbs: 'create' },
  { where: 'pgcloud', resource: 'secrets', verbs: 'get', names: 'pgcloud-ca' },
  { where: 'pgcloud-databases', resource: 'batch/jobs', verbs: 'create delete get list' },
  { where: 'pgcloud-databases', resource: 'pods', verbs: 'get list' },
  {
    where: 'pgcloud-databases',
    resource: 'postgresql.cnpg.io/clusters',
    verbs: 'create delete get list patch',
  },
  { where: 'pgcloud-databases', resource: 'secrets', verbs: 'create delete get list' },
  { where: 'pgcloud-databases', resource: 'services', verbs: 'create delete get list patch' },
].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** The settings the provisioner needs to start with the kubernetes driver in a pod. */
const KUBERNETES_REQUIRED = ['KUBERNETES_NAMESPACES', 'PGCLOUD_IMAGE'];

describe('deploy/kubernetes/overlays/cnpg: the kubernetes driver', () => {
  const objects = render(join(KUBERNETES_DIR, 'overlays', 'cnpg'));
  const apps = appWorkloads(objects);
  const config = settings(objects);
  const provisioner = apps.get('database-provisioner');
  const namespaces = Object.fromEntries(
    (config['KUBERNETES_NAMESPACES'] ?? '').split(',').map((pair) => pair.trim().split('=')),
  ) as Record<string, string>;

  it('renders objects that meet their kind’s schema, a token for the provisioner only', () => {
    assert.deepEqual(overlayProblems(objects, new Set(['database-provisioner'])), []);
    const accounts = objects.filter((o) => o.kind === 'ServiceAccount') as (Manifest & {
      automountServiceAccountToken?: boolean;
    })[];
    assert.deepEqual(accounts.filter((a) => a.automountServiceAccountToken !== false).map(label), [
      'ServiceAccount/database-provisioner',
    ]);
  });

  it('selects the kubernetes driver, with every setting it needs', () => {
    assert.equal(config['DATABASE_DRIVER'], 'kubernetes');
    for (const name of KUBERNETES_REQUIRED) assert.ok(config[name], `${name} is set`);
    // KUBERNETES_CA_NAMESPACE is unset: the pod's namespace, from its mounted token.
    assert.equal(config['KUBERNETES_CA_NAMESPACE'], undefined);
    assert.equal(provisioner?.spec.template.spec.automountServiceAccountToken, true);
    assert.ok(['ClusterIP', 'LoadBalancer'].includes(config['KUBERNETES_SERVICE_TYPE'] ?? ''));
    for (const name of ['KUBERNETES_READY_TIMEOUT_SECONDS', 'KUBERNETES_RESTORE_TIMEOUT_SECONDS'])
      assert.match(config[name] ?? '', /^[1-9]\d*$/, name);
    assert.match(
      config['KUBERNETES_POSTGRES_IMAGE'] ?? '',
      /^ghcr\.io\/cloudnative-pg\/postgresql:/,
    );
    // The restore Job runs the provisioner's own image, kept in step by replacements.
    assert.equal(config['PGCLOUD_IMAGE'], provisioner.spec.template.spec.containers[0]?.image);
  });

  it('gives every region a namespace, made by the overlay', () => {
    const regions = (config['REGIONS'] ?? '').split(',').map((pair) => pair.split('=')[0]?.trim());
    assert.ok(regions.length > 0);
    for (const region of regions)
      assert.ok(region && namespaces[region], `region ${region} has a namespace`);
    const made = objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name);
    for (const namespace of Object.values(namespaces))
      assert.ok(made.includes(namespace), `Namespace ${namespace} is made`);
  });

  it('grants the provisioner exactly the driver’s verbs, and cluster-wide only namespaces get', () => {
    assert.deepEqual(grantsTo(objects, 'pgcloud', 'database-provisioner'), PROVISIONER_GRANTS);
    const namespaced = PROVISIONER_GRANTS.filter(
      (g) => g.where !== 'cluster-wide' && g.where !== 'pgcloud',
    );
    assert.deepEqual(
      [...new Set(namespaced.map((g) => g.where))],
      [...new Set(Object.values(namespaces))],
      'a Role in each region’s namespace',
    );
    for (const app of APPS.filter((name) => name !== 'database-provisioner'))
      assert.deepEqual(grantsTo(objects, 'pgcloud', app), [], `${app} is granted nothing`);
    const clusterWide = objects
      .filter((o) => o.kind.startsWith('Cluster'))
      .map(label)
      .sort();
    assert.deepEqual(clusterWide, [
      'ClusterRole/pgcloud-database-provisioner-namespaces',
      'ClusterRoleBinding/pgcloud-database-provisioner-namespaces',
    ]);
  });

  it('runs the provisioner without a disk or server ports: its servers are Clusters', () => {
    assert.equal(provisioner?.kind, 'StatefulSet');
    assert.equal(provisioner.spec.replicas, 1);
    assert.equal(provisioner.spec.volumeClaimTemplates, undefined);
    const [container] = provisioner.spec.template.spec.containers;
    assert.deepEqual(
      container?.ports?.map((p) => p.name),
      ['management'],
    );
    assert.equal(
      networkPolicies(objects).filter((p) => p.metadata.name.startsWith('database-servers')).length,
      0,
    );
  });

  it('lets the apps reach the databases on 5432, the provisioner the API, the Jobs S3', () => {
    const policies = networkPolicies(objects);
    const toDatabases = policies.find((p) => p.metadata.name === 'cnpg-databases-egress');
    const selected = (
      toDatabases?.spec.podSelector as { matchExpressions?: { values: string[] }[] }
    ).matchExpressions?.[0]?.values;
    assert.deepEqual([...(selected ?? [])].sort(), [
      'backup-service',
      'database-provisioner',
      'pitr-worker',
    ]);
    assert.deepEqual(
      toDatabases?.spec.egress?.flatMap((rule) => rule.ports?.map((p) => p.port)),
      [5432],
    );
    const api = policies.find((p) => p.metadata.name === 'kubernetes-api-egress');
    assert.deepEqual(api?.spec.podSelector.matchLabels, {
      'app.kubernetes.io/name': 'database-provisioner',
    });
    assert.deepEqual(
      api.spec.egress?.flatMap((rule) => rule.ports?.map((p) => p.port)),
      [443, 6443],
    );
    const databasePolicies = policies.filter((p) => p.metadata.namespace === 'pgcloud-databases');
    assert.ok(databasePolicies.length > 0);
    // Egress there is denied but for what these allow (network-policies.spec.ts asks who
    // reaches what): DNS, CNPG's pods the API server and PostgreSQL, the Jobs S3.
    assert.deepEqual(
      databasePolicies.filter((p) => p.spec.policyTypes.includes('Egress')).map(label),
      [
        'NetworkPolicy/cnpg-pods-egress',
        'NetworkPolicy/default-deny',
        'NetworkPolicy/dns',
        'NetworkPolicy/restore-jobs-egress',
      ],
    );
    const ingress = databasePolicies.find((p) => p.metadata.name === 'databases-ingress');
    assert.deepEqual(
      ingress?.spec.ingress?.flatMap((rule) => rule.ports?.map((p) => p.port)),
      [5432],
    );
  });

  it('holds no Secret', () => {
    assert.deepEqual(objects.filter((o) => o.kind === 'Secret').map(label), []);
  });
});

describe('deploy/kubernetes in the repository', () => {
  it('holds no Secret in any manifest', () => {
    for (const file of yamlFiles(KUBERNETES_DIR)) {
      const text = readFileSync(file, 'utf8');
      const where = relative(ROOT, file);
      if (file.endsWith('definitions.json')) continue; // the broker's own format
      for (const object of parseManifests(text, where)) {
        if (object && typeof object === 'object' && 'kind' in object)
          assert.notEqual(object.kind, 'Secret', `${where} holds a Secret`);
      }
    }
  });

  it('the production overlay: two of every stateless app (the gateway by its HPA), budgets', () => {
    const objects = render(join(KUBERNETES_DIR, 'overlays', 'production'));
    const apps = appWorkloads(objects);
    const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler') as
      (Manifest & { spec: { scaleTargetRef: { name: string }; minReplicas: number } }) | undefined;
    assert.equal(hpa?.spec.scaleTargetRef.name, 'api-gateway');
    assert.equal(hpa.spec.minReplicas, 2);
    // The HPA owns the gateway's count: a replicas field would undo its scaling on apply.
    assert.equal(apps.get('api-gateway')?.spec.replicas, undefined);
    for (const app of STATELESS.filter((name) => name !== 'api-gateway'))
      assert.equal(apps.get(app)?.spec.replicas, 2, app);
    const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget') as (Manifest & {
      spec: { selector: { matchLabels: Record<string, string> } };
    })[];
    for (const app of STATELESS) {
      const labels = apps.get(app)?.spec.template.metadata.labels ?? {};
      const budget = budgets.find((b) =>
        Object.entries(b.spec.selector.matchLabels).every(([key, value]) => labels[key] === value),
      );
      assert.ok(budget, `a PodDisruptionBudget selects ${app}'s pods`);
    }
  });

  it('the dev overlay: one of each app, and its own broker, database and S3', () => {
    const objects = render(join(KUBERNETES_DIR, 'overlays', 'dev'));
    for (const [app, workload] of appWorkloads(objects))
      assert.equal(workload.spec.replicas, 1, app);
    const servers = workloads(objects)
      .filter((w) => w.metadata.labels?.['pgcloud.io/role'] !== 'app')
      .map((w) => w.metadata.name)
      .sort();
    assert.deepEqual(servers, ['minio', 'postgres', 'rabbitmq']);
  });

  it('refuses a field its kind does not have, and a kind it does not know', () => {
    // The checks above must be able to fail: a misspelt probe and an unknown kind.
    const [deployment] = render(join(KUBERNETES_DIR, 'base')).filter(
      (o) => o.kind === 'Deployment',
    ) as Workload[];
    assert.ok(deployment);
    const copy = structuredClone(deployment);
    const container = copy.spec.template.spec.containers[0] as Container & {
      livenesProbe?: object;
    };
    container.livenesProbe = container.livenessProbe ?? {};
    assert.deepEqual(schemaProblems(copy), [
      `Deployment/${copy.metadata.name}: /spec/template/spec/containers/0/livenesProbe is not a field of Deployment`,
    ]);
    assert.equal(schemaProblems({ ...copy, apiVersion: 'apps/v1beta1' }).length, 1);
    const wrongType = structuredClone(deployment);
    (wrongType.spec as { replicas: unknown }).replicas = 'two';
    assert.equal(schemaProblems(wrongType).length, 1);
  });
});
