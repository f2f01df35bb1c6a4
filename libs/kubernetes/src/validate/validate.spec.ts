import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertValid, validateObject } from './index.js';

const metadata = {
  name: 'srv-abc123',
  namespace: 'pgcloud-eu-west',
  labels: { 'app.kubernetes.io/managed-by': 'pgcloud', 'pgcloud.dev/server-id': 'srv_abc123' },
};

/** pgcloud's Service for a database. */
const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata,
  spec: {
    type: 'LoadBalancer',
    ports: [{ name: 'postgres', port: 6543, targetPort: 5432, protocol: 'TCP' }],
    selector: { 'cnpg.io/cluster': 'srv-abc123-g1', 'cnpg.io/instanceRole': 'primary' },
  },
  status: { loadBalancer: { ingress: [{ ip: '127.0.0.1' }] } },
};

/** The application role's Secret. */
const secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { ...metadata, name: 'srv-abc123-app' },
  type: 'kubernetes.io/basic-auth',
  stringData: { username: 'app', password: 'SCRAM-SHA-256$4096:c2FsdA==$a2V5:a2V5' },
};

/** A restore Job: pgcloud's image building the restored data beside the live Cluster. */
const job = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { ...metadata, name: 'srv-abc123-restore' },
  spec: {
    backoffLimit: 0,
    ttlSecondsAfterFinished: 3600,
    template: {
      metadata: { labels: { 'pgcloud.dev/server-id': 'srv_abc123' } },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'restore',
            image: 'pgcloud:latest',
            args: ['restore'],
            env: [{ name: 'RESTORE_ID', value: 'rst_1' }],
            resources: { requests: { cpu: '500m', memory: '512Mi' } },
          },
        ],
      },
    },
  },
};

/** `object` with one field set by path. */
function withField(object: object, path: string, value: unknown): object {
  const copy = structuredClone(object) as Record<string, unknown>;
  const keys = path.split('.');
  const last = keys.pop()!;
  let parent = copy;
  for (const key of keys) parent = parent[key] as Record<string, unknown>;
  parent[last] = value;
  return copy;
}

describe('validateObject: built-in kinds', () => {
  it('accepts a valid Service, Secret and Job', () => {
    assert.deepEqual([service, secret, job].flatMap(validateObject), []);
  });

  it('refuses a field the kind does not have, by its JSON path', () => {
    assert.deepEqual(validateObject(withField(service, 'spec.selectors', { app: 'x' })), [
      'Service/srv-abc123: /spec/selectors is not a field of Service',
    ]);
    assert.deepEqual(validateObject(withField(secret, 'strinData', { password: 'x' })), [
      'Secret/srv-abc123-app: /strinData is not a field of Secret',
    ]);
    assert.deepEqual(
      validateObject(withField(job, 'spec.template.spec.containers.0.imagePullPolicyy', 'Never')),
      [
        'Job/srv-abc123-restore: /spec/template/spec/containers/0/imagePullPolicyy is not a field of Job',
      ],
    );
  });

  it('refuses a value of the wrong type or outside an enum, one problem each', () => {
    const wrong = withField(withField(service, 'spec.ports.0.port', 'six'), 'spec.type', 'Public');
    assert.deepEqual(validateObject(wrong), [
      'Service/srv-abc123: /spec/ports/0/port must be integer',
      'Service/srv-abc123: /spec/type must be one of: ClusterIP, ExternalName, LoadBalancer, NodePort',
    ]);
  });

  it('refuses a kind it does not know, and what is not an object', () => {
    assert.deepEqual(validateObject({ ...secret, apiVersion: 'v2' }), [
      'Secret/srv-abc123-app: v2 Secret is not a known kind',
    ]);
    assert.deepEqual(
      validateObject({ apiVersion: 'postgresql.cnpg.io/v1', kind: 'Backup', metadata }),
      ['Backup/srv-abc123: postgresql.cnpg.io/v1 Backup is not a known kind'],
    );
    assert.equal(validateObject(null).length, 1);
    assert.equal(validateObject([service]).length, 1);
  });
});

describe('assertValid', () => {
  it('passes a valid object and throws one Error listing every problem of an invalid one', () => {
    assert.doesNotThrow(() => assertValid(job));
    const invalid = withField(withField(secret, 'strinData', {}), 'metadata.owner', 'me');
    assert.throws(
      () => assertValid(invalid),
      (err: Error) =>
        err.message.includes('/strinData is not a field of Secret') &&
        err.message.includes('/metadata/owner is not a field of Secret'),
    );
  });
});

describe('validateObject: PrometheusRule', () => {
  const rule = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'pgcloud', namespace: 'pgcloud' },
    spec: {
      groups: [
        {
          name: 'g',
          rules: [
            { alert: 'A', expr: 'up == 0', for: '5m', labels: { severity: 'warning' } },
            { record: 'job:up:sum', expr: 'sum by (job) (up)' },
          ],
        },
      ],
    },
  };

  it('passes alerts and recordings', () => {
    assert.deepEqual(validateObject(rule), []);
  });

  it('refuses a rule that is neither an alert nor a recording, a bad duration, an unknown field', () => {
    const group = rule.spec.groups[0];
    const broken = {
      ...rule,
      spec: {
        groups: [
          {
            ...group,
            rules: [
              { expr: 'up' },
              { alert: 'B', expr: 'up', for: 'soon' },
              { alert: 'C', expr: 'up', severity: 'x' },
            ],
          },
        ],
      },
    };
    const problems = validateObject(broken);
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.ok(problems.every((p) => p.startsWith('PrometheusRule/pgcloud: /spec/groups/0/rules/')));
  });
});
