import assert from 'node:assert/strict';
import { HEALTH_PING } from '@pgcloud/contracts';
import { after, before, describe, it } from 'node:test';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import { PrivateRabbitMq, STACK_APPS } from '@pgcloud/devstack';
import { monitoredMetrics } from '../deploy/monitoring.js';
import { expectData } from '../support/assertions.js';
import type { Sample } from '../support/prometheus-text.js';
import { parsePrometheusText, sumOf } from '../support/prometheus-text.js';
import { newClient, ownStack, sharedStack, uniqueLogin } from '../support/shared-stack.js';

/** How long a broker outage may take to show in /readyz, and its end to clear it. */
const READINESS_BOUND_MS = 20_000;

interface Probe {
  status: number;
  body: { status?: string; error?: Record<string, unknown>; details?: Record<string, unknown> };
}

async function probe(stack: Stack, app: string, path: '/livez' | '/readyz'): Promise<Probe> {
  const response = await fetch(`${stack.managementUrl(app)}${path}`, {
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as Probe['body'] };
}

async function metricsOf(stack: Stack, app: string): Promise<Sample[]> {
  const response = await fetch(`${stack.managementUrl(app)}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

describe('management ports of the cloud apps', () => {
  let stack: Stack;
  let user: SignedIn;

  before(async () => {
    stack = await sharedStack();
    user = await signIn(await newClient(), uniqueLogin('metrics-watcher'));
  });

  for (const app of STACK_APPS) {
    it(`${app}: /livez and /readyz answer 200, /readyz naming what it checked`, async () => {
      assert.deepEqual(await probe(stack, app, '/livez'), { status: 200, body: { status: 'ok' } });
      const ready = await eventually(
        async () => {
          const answer = await probe(stack, app, '/readyz');
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          return answer;
        },
        { timeoutMs: 10_000 },
      );
      assert.equal(ready.body.status, 'ok');
      const checked = Object.keys(ready.body.details ?? {});
      if (app === 'api-gateway') {
        assert.ok(checked.includes('broker-calls-projects'), checked.join());
      } else {
        for (const name of ['database', 'broker-consumer'])
          assert.ok(checked.includes(name), `${name} in ${checked.join()}`);
      }
      if (app === 'database-provisioner') assert.ok(checked.includes('driver'), checked.join());
    });

    it(`${app}: /metrics is Prometheus text labelled with the app, with the process's metrics`, async () => {
      const samples = await metricsOf(stack, app);
      assert.ok(samples.length > 0);
      for (const sample of samples) assert.equal(sample.labels['service'], app, sample.name);
      assert.ok(samples.some((s) => s.name === 'pgcloud_process_resident_memory_bytes'));
    });
  }

  it('exports every metric the alerting rules and the dashboard read (deploy/monitoring)', async () => {
    const exported = new Set<string>();
    for (const app of STACK_APPS) {
      const text = await (await fetch(`${stack.managementUrl(app)}/metrics`)).text();
      for (const [, name = ''] of text.matchAll(/^# TYPE (\S+) /gm)) exported.add(name);
    }
    const missing = monitoredMetrics().filter((name) => !exported.has(name));
    assert.deepEqual(missing, [], 'every metric deploy/monitoring reads is exported');
    assert.ok(exported.has('pgcloud_ready'));
  });

  it("counts a request through the gateway in its HTTP and RPC histograms and the handler's", async () => {
    const route = { method: 'POST', route: '/projects', status: '201' };
    const call = { pattern: 'projects.create', outcome: 'ok' };
    const counts = async (): Promise<number[]> => {
      const gateway = await metricsOf(stack, 'api-gateway');
      const projects = await metricsOf(stack, 'project-service');
      return [
        sumOf(gateway, 'pgcloud_http_request_duration_seconds_count', route),
        sumOf(gateway, 'pgcloud_rpc_client_duration_seconds_count', call),
        sumOf(projects, 'pgcloud_rpc_handler_duration_seconds_count', call),
      ];
    };
    const before = await counts();
    const project = expectData<{ id: string }>(
      await user.api.post('/projects', { name: 'measured' }),
      201,
    );
    expectData(await user.api.get(`/projects/${project.id}`), 200);
    // The answer can reach the client a moment before the gateway's 'finish' is counted.
    await eventually(
      async () => {
        const now = await counts();
        for (const [index, count] of now.entries())
          assert.ok(count >= (before[index] ?? 0) + 1, `${now.join()} after ${before.join()}`);
      },
      { timeoutMs: 5000 },
    );
    // A resource's route is counted under its template, never under its id.
    await eventually(
      async () => {
        const routes = (await metricsOf(stack, 'api-gateway'))
          .filter((s) => s.name === 'pgcloud_http_request_duration_seconds_count')
          .map((s) => s.labels['route'] ?? '');
        assert.ok(routes.includes('/projects/:id'), routes.join());
        assert.ok(!routes.some((r) => r.includes(project.id)), routes.join());
      },
      { timeoutMs: 5000 },
    );
  });

  it('counts a 429 under the kind of bucket that refused it', async () => {
    const refusals = async (): Promise<number> =>
      sumOf(await metricsOf(stack, 'api-gateway'), 'pgcloud_rate_limit_refusals_total', {
        bucket: 'ip',
      });
    const before = await refusals();
    // An anonymous client of an address of its own empties its IP bucket (burst 30 here).
    const anonymous = await newClient();
    let refused = 0;
    for (let i = 0; i < 100 && refused === 0; i += 1)
      if ((await anonymous.get('/projects')).status === 429) refused += 1;
    assert.equal(refused, 1, 'the IP bucket never ran out');
    await eventually(async () => assert.equal(await refusals(), before + 1), { timeoutMs: 5000 });
  });
});

/** A stack on a broker of its own, so stopping the broker touches nothing else. */
describe('readiness through a broker outage', () => {
  let broker: PrivateRabbitMq;
  let stack: Stack;

  before(async () => {
    broker = await PrivateRabbitMq.start();
    stack = await ownStack({ RABBITMQ_URL: broker.url });
  });

  after(async () => {
    await stack?.stop();
    await broker?.destroy();
  });

  const statuses = (path: '/livez' | '/readyz'): Promise<number[]> =>
    Promise.all(STACK_APPS.map(async (app) => (await probe(stack, app, path)).status));

  it('counts a call given up for lack of an answer as an RPC timeout of its pattern', async () => {
    const timeouts = async (): Promise<number> =>
      sumOf(await metricsOf(stack, 'api-gateway'), 'pgcloud_rpc_timeouts_total', {
        pattern: HEALTH_PING,
      });
    const before = await timeouts();
    await stack.stopApp('project-service');
    try {
      const health = expectData<{ status: string }>(
        await new ApiClient(stack.baseUrl).get('/'),
        200,
      );
      assert.equal(health.status, 'degraded');
      assert.ok((await timeouts()) >= before + 1);
    } finally {
      await stack.startApp('project-service');
    }
  });

  it('turns every app not ready within seconds of the broker stopping, live all along, and ready again once it is back', async () => {
    assert.deepEqual(
      await statuses('/readyz'),
      STACK_APPS.map(() => 200),
    );
    await broker.halt();
    await eventually(
      async () => {
        assert.deepEqual(
          await statuses('/readyz'),
          STACK_APPS.map(() => 503),
        );
      },
      { timeoutMs: READINESS_BOUND_MS, intervalMs: 500 },
    );
    assert.deepEqual(
      await statuses('/livez'),
      STACK_APPS.map(() => 200),
    );
    const gateway = await probe(stack, 'api-gateway', '/readyz');
    assert.ok(Object.keys(gateway.body.error ?? {}).some((name) => name.startsWith('broker-')));

    await broker.resume();
    await eventually(
      async () => {
        assert.deepEqual(
          await statuses('/readyz'),
          STACK_APPS.map(() => 200),
        );
      },
      { timeoutMs: READINESS_BOUND_MS, intervalMs: 500 },
    );
  });
});
