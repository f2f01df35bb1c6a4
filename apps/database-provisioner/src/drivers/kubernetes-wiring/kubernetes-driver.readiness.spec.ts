import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { ApiServerStandIn } from '@pgcloud/kube-stand-in';
import { KubernetesDriverReadiness } from './kubernetes-driver.readiness.js';

async function driverCheck(readiness: KubernetesDriverReadiness): Promise<void> {
  const [check, ...others] = readiness.readinessChecks();
  assert.equal(check?.name, 'driver');
  assert.equal(others.length, 0);
  await check.check(new AbortController().signal);
}

// Against the in-memory API server of libs/kube-stand-in: it answers as Kubernetes does (404 for
// a missing namespace, 401 for a token it does not know).
describe('KubernetesDriverReadiness', () => {
  let api: ApiServerStandIn;
  before(async () => (api = await ApiServerStandIn.start()));
  after(() => api.stop());

  it('is ready once every region’s namespace exists, and names the one missing', async () => {
    const kubeConfig = await api.kubeConfig();
    const readiness = new KubernetesDriverReadiness(kubeConfig, {
      'eu-west': 'pgcloud-databases',
      'eu-central': 'pgcloud-databases',
    });
    await assert.rejects(driverCheck(readiness), {
      message: 'namespace pgcloud-databases (KUBERNETES_NAMESPACES) does not exist',
    });
    await kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'pgcloud-databases' } } });
    await driverCheck(readiness);
    const requests = api.requests.length;
    await driverCheck(readiness);
    assert.equal(api.requests.length - requests, 1, 'one read per namespace, not per region');
  });

  it('is not ready when the API refuses the credentials, saying so', async () => {
    const kubeConfig = await api.kubeConfig();
    const user = kubeConfig.getCurrentUser();
    assert.ok(user);
    (user as { token?: string }).token = 'not-the-token';
    const readiness = new KubernetesDriverReadiness(kubeConfig, { 'eu-west': 'default' });
    await assert.rejects(
      driverCheck(readiness),
      /^Error: the Kubernetes API did not answer: HTTP 401/,
    );
  });

  it('is not ready when the API does not answer', async () => {
    const stopped = await ApiServerStandIn.start();
    const kubeConfig = await stopped.kubeConfig();
    await stopped.stop();
    const readiness = new KubernetesDriverReadiness(kubeConfig, { 'eu-west': 'default' });
    await assert.rejects(driverCheck(readiness), /the Kubernetes API did not answer/);
  });
});
