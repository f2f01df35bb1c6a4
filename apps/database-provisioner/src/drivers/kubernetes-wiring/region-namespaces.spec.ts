import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROJECT_PATTERNS } from '@pgcloud/contracts';
import { answer, fakeRpcClient } from '@pgcloud/testing';
import { loadConfig } from '../../config.js';
import { RegionNamespaces } from './region-namespaces.js';

const config = loadConfig(
  {
    DATABASE_DRIVER: 'kubernetes',
    KUBERNETES_NAMESPACES: 'eu-west=pgcloud-databases,us-east=pgcloud-us',
    PGCLOUD_IMAGE: 'pgcloud',
    S3_ENDPOINT: 'http://127.0.0.1:7480',
  },
  () => 'pgcloud',
);

function regions(...ids: string[]) {
  return answer(PROJECT_PATTERNS.regions, () => ({
    regions: ids.map((id) => ({ id, name: id })),
  }));
}

async function readiness(check: RegionNamespaces): Promise<void> {
  const [found] = check.readinessChecks();
  assert.equal(found?.name, 'region-namespaces');
  await found.check(new AbortController().signal);
}

describe('RegionNamespaces', () => {
  it('is content when every region of project-service has a namespace', async () => {
    const check = new RegionNamespaces(fakeRpcClient(regions('eu-west', 'us-east')), config);
    check.onApplicationBootstrap();
    assert.deepEqual(await check.regionsWithoutNamespace(), []);
    await readiness(check);
    await check.onApplicationShutdown();
  });

  it('names the regions without a namespace, and keeps /readyz failing', async () => {
    const rpc = fakeRpcClient(regions('eu-west', 'ap-south', 'sa-east'));
    const check = new RegionNamespaces(rpc, config);
    check.onApplicationBootstrap();
    assert.deepEqual(await check.regionsWithoutNamespace(), ['ap-south', 'sa-east']);
    await assert.rejects(readiness(check), {
      message:
        'region ap-south, sa-east has no namespace in KUBERNETES_NAMESPACES ' +
        '(eu-west=pgcloud-databases,us-east=pgcloud-us): add region=namespace for each, or ' +
        'databases there fail',
    });
    await check.onApplicationShutdown();
  });

  it('does not hold the start or /readyz while project-service is away, and stops at once', async () => {
    let asked = 0;
    const rpc = fakeRpcClient(
      answer(PROJECT_PATTERNS.regions, () => {
        asked++;
        throw new Error('project-service did not answer');
      }),
    );
    const check = new RegionNamespaces(rpc, config);
    check.onApplicationBootstrap();
    await readiness(check);
    const started = Date.now();
    await check.onApplicationShutdown();
    assert.ok(Date.now() - started < 1000, 'the retry wait ends with the app');
    assert.equal(asked, 1);
    assert.deepEqual(await check.regionsWithoutNamespace(), []);
  });
});
