import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Backup, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { ApiClient, eventually, signIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import type { ObjectStore } from '@pgcloud/storage';
import { expectData } from '../support/assertions.js';
import { runningDatabase } from '../support/databases.js';
import { sleep } from '../support/device-flow.js';
import { ownStack } from '../support/shared-stack.js';

const PERIOD_S = 5;
const RETENTION_S = 12;
const CHECK_S = 1;
// Over four periods, and long enough for the first backups to expire while watched.
const OBSERVE_MS = 22_000;

/** Short periods and retention, two backup-service replicas: a stack of its own. */
describe('automated backups: one per database and period, expired ones swept', () => {
  let stack: Stack;
  let user: SignedIn;
  let project: Project;
  let bucket: ObjectStore;
  const databases = new Map<string, string>(); // name -> id

  before(async () => {
    stack = await ownStack({
      BACKUP_SCHEDULE_INTERVAL_SECONDS: String(PERIOD_S),
      BACKUP_CHECK_INTERVAL_SECONDS: String(CHECK_S),
      BACKUP_RETENTION_FREE_SECONDS: String(RETENTION_S),
    });
    await stack.startApp('backup-service', { name: 'backup-service-2' });
    bucket = stack.bucket();
    user = await signIn(new ApiClient(stack.baseUrl), 'scheduled');
    project = expectData<Project>(await user.api.post('/projects', { name: 'nightly' }), 201);
    for (const name of ['alpha', 'beta'])
      databases.set(name, (await runningDatabase(user.api, project.id, name)).database.id);
  });

  after(async () => {
    bucket?.close();
    await stack?.stop();
  });

  const automated = async (name: string): Promise<Backup[]> => {
    const path = `/projects/${project.id}/databases/${name}/backups`;
    const { backups } = expectData<{ backups: Backup[] }>(await user.api.get(path), 200);
    return backups.filter((b) => b.type === 'automated').reverse(); // oldest first
  };

  it('takes one backup per period for each database, with expires_at, and sweeps expired ones', async () => {
    const started = Date.now();
    const seen = new Map<string, Backup>();
    while (Date.now() - started < OBSERVE_MS) {
      for (const name of databases.keys()) for (const b of await automated(name)) seen.set(b.id, b);
      await sleep(500);
    }
    const now = Date.now();
    for (const [name, databaseId] of databases) {
      const all = [...seen.values()].filter((b) => b.database_id === databaseId);
      all.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
      assert.ok(all.length >= 3, `${name}: ${all.length} automated backups in ${OBSERVE_MS} ms`);
      assert.ok(all.length <= Math.ceil(OBSERVE_MS / 1000 / PERIOD_S) + 1, `${name}: too many`);
      for (const [i, backup] of all.entries()) {
        const lifetime = Date.parse(backup.expires_at ?? '') - Date.parse(backup.created_at);
        assert.ok(Math.abs(lifetime - RETENTION_S * 1000) < 2000, `expires_at of ${backup.id}`);
        // The first backup comes as soon as a database runs, anywhere in its period; the
        // next ones at the starts of the following periods, a period apart.
        const previous = all[i - 1];
        if (previous && i >= 2) {
          const gap = Date.parse(backup.created_at) - Date.parse(previous.created_at);
          assert.ok(gap > (PERIOD_S / 2) * 1000, `${name}: two backups ${gap} ms apart`);
        }
      }
      // Expired backups leave the list, and their objects the bucket, within a few sweeps.
      const objectOf = (backup: Backup): Promise<unknown[]> =>
        bucket.list(`projects/${project.id}/databases/${databaseId}/base/${backup.id}.tar.zst`);
      const expired = all.filter((b) => Date.parse(b.expires_at ?? '') < now);
      assert.ok(expired.length >= 1, `${name}: some backups expired while we watched`);
      await eventually(async () => {
        const listed = await automated(name);
        for (const backup of expired) {
          assert.ok(!listed.some((b) => b.id === backup.id), `${backup.id} expired and was swept`);
          assert.deepEqual(await objectOf(backup), [], `the object of ${backup.id} is gone`);
        }
      });
      // A listed, completed backup has its object. The one exception is a backup the sweep
      // is removing at this moment (object first, then record): it must have expired, and
      // it leaves the list at once.
      const kept = (await automated(name)).filter((b) => b.status === 'completed');
      assert.ok(kept.length >= 1, `${name}: the newest backups are kept`);
      for (const backup of kept) {
        if ((await objectOf(backup)).length === 1) continue;
        assert.ok(
          Date.parse(backup.expires_at ?? '') <= Date.now(),
          `the object of ${backup.id}, which has not expired, is there`,
        );
        await eventually(
          async () =>
            assert.ok(
              !(await automated(name)).some((b) => b.id === backup.id),
              `${backup.id}, whose object the sweep removed, leaves the list`,
            ),
          { timeoutMs: 10_000 },
        );
      }
    }
  });

  it('counts no database overdue while their backups complete, on either replica', async () => {
    for (const app of ['backup-service', 'backup-service-2']) {
      const text = await (await fetch(`${stack.managementUrl(app)}/metrics`)).text();
      const overdue = /^pgcloud_backups_overdue\{[^}]*\} (\S+)$/m.exec(text)?.[1];
      assert.equal(overdue, '0', `${app}: ${overdue}`);
    }
  });
});
