import { pgBinDir } from '@pgcloud/postgres';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '@pgcloud/testing';
import { KubernetesStandIn } from './kubernetes-stand-in.js';

const root = join(tmpdir(), 'pgcloud-test-jobs', randomBytes(4).toString('hex'));
const namespace = 'jobs-test';
const mounts = [
  { name: 'data', mountPath: '/data' },
  { name: 'input', mountPath: '/input', readOnly: true },
];
// The init container copies a Secret's key into the emptyDir and says what the image holds.
const BUILD = `const fs = require('fs');
fs.copyFileSync(process.env.INPUT + '/word', process.env.DATA + '/word');
fs.writeFileSync(process.env.OUT, JSON.stringify({ built: fs.readFileSync('greeting.txt', 'utf8') }));`;
// The readiness probe connects and hangs up at once: the socket's error must not crash it.
const SERVE = `const fs = require('fs');
require('net').createServer((s) => {
  s.on('error', () => {});
  s.end(fs.readFileSync(process.env.DATA + '/word', 'utf8') + '\\n');
}).listen(Number(process.env.PORT), '127.0.0.1');`;

interface Status {
  phase?: string;
  conditions?: { type: string; status: string }[];
  initContainerStatuses?: { state: Record<string, Record<string, unknown>> }[];
  containerStatuses?: { state: Record<string, Record<string, unknown>>; containerID?: string }[];
  active?: number;
  ready?: number;
  failed?: number;
}

/** The first line a server sends, or what became of the connection (never a hang). */
function firstLine(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.setTimeout(5000, () => {
      resolve('timeout');
      socket.destroy();
    });
    socket.once('data', (chunk: Buffer) => {
      resolve(chunk.toString().trim());
      socket.destroy();
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    socket.once('close', () => resolve('closed'));
  });
}

function job(name: string, init: string, serve: string) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { app: name } },
        spec: {
          restartPolicy: 'Never',
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'input', secret: { secretName: 'job-input', defaultMode: 0o400 } },
          ],
          initContainers: [
            {
              name: 'build',
              image: 'stand-in',
              command: ['node', '-e', init],
              env: [
                { name: 'DATA', value: '/data' },
                { name: 'INPUT', value: '/input' },
                { name: 'OUT', value: '/dev/termination-log' },
              ],
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'FallbackToLogsOnError',
              volumeMounts: mounts,
            },
          ],
          containers: [
            {
              name: 'serve',
              image: 'stand-in',
              command: ['node', '-e', serve],
              env: [
                { name: 'DATA', value: '/data' },
                { name: 'PORT', value: '7000' },
              ],
              ports: [{ name: 'greeting', containerPort: 7000 }],
              readinessProbe: { tcpSocket: { port: 7000 }, periodSeconds: 1 },
              volumeMounts: mounts,
            },
          ],
        },
      },
    },
  };
}

describe('KubeletStandIn (Job controller and kubelet stand-in) on the Kubernetes stand-in', () => {
  let standIn: KubernetesStandIn;

  async function call(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${standIn.api.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${standIn.api.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }
  async function create(path: string, body: unknown): Promise<void> {
    const response = await call('POST', path, body);
    assert.equal(response.status, 201, await response.text());
  }
  const podOf = (name: string) => {
    const [pod] = standIn.api
      .objects('Pod', namespace)
      .filter((p) => p.metadata.labels?.['job-name'] === name);
    return pod;
  };
  const statusOf = (object: object | undefined) =>
    ((object as { status?: unknown } | undefined)?.status ?? {}) as Status;
  const jobOf = (name: string) =>
    standIn.api.objects('Job', namespace).find((j) => j.metadata.name === name);

  before(async () => {
    const imageRoot = join(root, 'image');
    await mkdir(imageRoot, { recursive: true });
    await writeFile(join(imageRoot, 'greeting.txt'), 'hello from the image');
    standIn = await KubernetesStandIn.start({
      dataRoot: join(root, 'data'),
      binDir: pgBinDir(process.env.PG_BIN_DIR),
      osUser: process.env.PG_OS_USER ?? 'postgres',
      namespaces: [namespace],
      imageRoot,
    });
    await create(`/api/v1/namespaces/${namespace}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'job-input' },
      stringData: { word: 'secret-word' },
    });
  });

  after(async () => {
    await standIn.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('runs the init container, then the container behind a ClusterIP Service; deletion stops it', async () => {
    await create(`/api/v1/namespaces/${namespace}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'greeter' },
      spec: { selector: { app: 'greeter' }, ports: [{ port: 7000, targetPort: 7000 }] },
    });
    await create(`/apis/batch/v1/namespaces/${namespace}/jobs`, job('greeter', BUILD, SERVE));
    const pod = await eventually(
      () => {
        const found = podOf('greeter');
        const ready = statusOf(found).conditions?.find((c) => c.type === 'Ready');
        assert.equal(ready?.status, 'True');
        return found;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const status = statusOf(pod);
    assert.equal(status.phase, 'Running');
    assert.equal(pod?.metadata.labels?.['batch.kubernetes.io/job-name'], 'greeter');
    assert.deepEqual(
      status.initContainerStatuses?.[0]?.state.terminated?.message,
      '{"built":"hello from the image"}',
    );
    assert.equal(status.initContainerStatuses?.[0]?.state.terminated?.exitCode, 0);
    assert.ok(status.containerStatuses?.[0]?.state.running);
    await eventually(() => assert.equal(statusOf(jobOf('greeter')).ready, 1), { timeoutMs: 5000 });
    assert.equal(statusOf(jobOf('greeter')).active, 1);

    const host = await eventually(
      () => {
        const resolved = standIn.operator.resolveHost('greeter.jobs-test.svc');
        assert.ok(resolved && resolved !== '127.0.0.1', `resolved to ${resolved}`);
        return resolved;
      },
      { timeoutMs: 5000, intervalMs: 50 },
    );
    await eventually(async () => assert.equal(await firstLine(host, 7000), 'secret-word'), {
      timeoutMs: 5000,
      intervalMs: 50,
    });

    const pid = Number(status.containerStatuses?.[0]?.containerID?.split('//')[1]);
    assert.ok(pid > 0);
    const deleted = await call(
      'DELETE',
      `/apis/batch/v1/namespaces/${namespace}/jobs/greeter?propagationPolicy=Foreground`,
    );
    assert.equal(deleted.status, 200);
    // It stays (deleting) until its pod is gone, and the pod until its process has ended.
    assert.ok(jobOf('greeter')?.metadata.deletionTimestamp);
    await eventually(
      () => {
        assert.equal(jobOf('greeter'), undefined);
        assert.equal(podOf('greeter'), undefined);
      },
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
    assert.equal(await firstLine(host, 7000), 'ECONNRESET');
  });

  it('fails a Job whose init container fails, the end of its output as the message', async () => {
    const broken = "console.log('line one'); console.error('it broke'); process.exit(3)";
    await create(`/apis/batch/v1/namespaces/${namespace}/jobs`, job('broken', broken, SERVE));
    const failed = await eventually(
      () => {
        const status = statusOf(jobOf('broken'));
        assert.equal(status.failed, 1);
        return status;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    assert.deepEqual(
      failed.conditions?.map((c) => [c.type, c.status]),
      [['Failed', 'True']],
    );
    const status = statusOf(podOf('broken'));
    assert.equal(status.phase, 'Failed');
    const terminated = status.initContainerStatuses?.[0]?.state.terminated;
    assert.equal(terminated?.exitCode, 3);
    assert.equal(terminated?.reason, 'Error');
    assert.equal(terminated?.message, 'line one\nit broke');
    assert.deepEqual(status.containerStatuses?.[0]?.state, {
      waiting: { reason: 'PodInitializing' },
    });
  });
});
