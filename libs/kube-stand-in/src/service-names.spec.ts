import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceOfHost } from './service-names.js';

describe('serviceOfHost: cluster DNS names of Services', () => {
  it('reads <svc>.<ns>, .svc and .svc.cluster.local names', () => {
    const named = { namespace: 'pgcloud-databases', name: 'srv-abc-restore' };
    for (const host of [
      'srv-abc-restore.pgcloud-databases',
      'srv-abc-restore.pgcloud-databases.svc',
      'srv-abc-restore.pgcloud-databases.svc.cluster.local',
      'SRV-abc-restore.pgcloud-databases.svc.cluster.local.',
    ])
      assert.deepEqual(serviceOfHost(host), named);
  });

  it('answers nothing for other names', () => {
    for (const host of [
      'localhost',
      '127.0.0.1',
      'srv',
      'a.b.c',
      'a.b.svc.other',
      '-a.b.svc',
      'a_b.c',
    ])
      assert.equal(serviceOfHost(host), undefined, host);
  });
});
