import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { E2E_GROUPS, groupsOf, specMatchesArea, suitesOfArea } from './groups.js';

const here = new URL('.', import.meta.url);
const files = (dir: string, suffix: string) =>
  readdirSync(new URL(dir, here))
    .filter((name) => name.endsWith(suffix))
    .map((name) => name.slice(0, -suffix.length))
    .sort();

describe('the e2e groups', () => {
  it('run every suite, each in one group, and have an entry file each', () => {
    const grouped = E2E_GROUPS.flatMap((group) => group.suites);
    assert.deepEqual([...grouped].sort(), files('suites/', '.suite.js'));
    assert.equal(new Set(grouped).size, grouped.length, 'no suite is in two groups');
    assert.deepEqual(E2E_GROUPS.map((group) => group.name).sort(), files('groups/', '.e2e.js'));
  });

  it('select the suites and test files of an area, in either number', () => {
    const restores = [...suitesOfArea('restores')].sort();
    assert.deepEqual(restores, [
      'callee-checks',
      'drills',
      'pitr-restores',
      'pitr-restores-in-place',
      'provisioner-search-path',
      'restore-cancellation',
      'restore-crashes',
      'restore-progress',
      'restores',
    ]);
    assert.deepEqual([...suitesOfArea('restore')].sort(), restores);
    assert.deepEqual(
      groupsOf(new Set(restores)).map((group) => group.name),
      ['faults', 'api', 'pitr'],
    );
    assert.ok(suitesOfArea('gateway').has('rate-limits'), 'by its areas');
    assert.deepEqual([...suitesOfArea('kubernetes')], ['kubernetes-driver', 'kubernetes-drills']);
    assert.ok(specMatchesArea('apps/database-provisioner/dist/restores/x.spec.js', 'restores'));
    assert.ok(!specMatchesArea('apps/api-gateway/dist/http/body-parsing.spec.js', 'restores'));
    assert.ok(specMatchesArea('libs/kube-stand-in/dist/pod-env.spec.js', 'kubernetes'));
    assert.equal(groupsOf().length, E2E_GROUPS.length);
  });
});
