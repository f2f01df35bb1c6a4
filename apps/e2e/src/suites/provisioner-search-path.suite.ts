import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedBackup, CreatedRestore, Project, RestorePoint } from '@pgcloud/contracts';
import { signIn } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase } from '../support/databases.js';
import { waitForRestore } from '../support/restores.js';
import { CALLERS_SQL, PLANT_SQL, SPRING_SQL } from '../support/search-path-trap.js';
import { newClient, uniqueLogin } from '../support/shared-stack.js';

/**
 * The cloud's own superuser sessions on a tenant's server (a restore point pitr-worker
 * asks for, a restore's hold, checks and swap, the provisioner's watch of its size) meet
 * a database whose owner planted an `=` in `public` and put `public` before the catalog:
 * none of them runs it.
 */
describe('provisioner: an operator planted in a database never runs in its sessions', () => {
  it('restores a planted database and makes restore points on it, running none of it', async () => {
    const owner = await signIn(await newClient(), uniqueLogin('planter'));
    const project = expectData<Project>(await owner.api.post('/projects', { name: 'trap' }), 201);
    const name = 'planted';
    const { connection } = await runningDatabase(owner.api, project.id, name);
    const url = connection.connection_string;
    const path = `/projects/${project.id}/databases/${name}`;
    await psql(url, PLANT_SQL(name));
    // The trap works: a session that takes the database's search_path runs the plant.
    await psql(url, SPRING_SQL);
    assert.equal(await psql(url, CALLERS_SQL), connection.user);
    await psql(url, 'DELETE FROM public.calls');

    expectData(await owner.api.post(`${path}/pitr/enable`, { retention_days: 1 }), 200);
    expectData<RestorePoint>(
      await owner.api.post(`${path}/pitr/restore-points`, { name: 'planted-point' }),
      201,
    );
    const backup = expectData<CreatedBackup>(await owner.api.post(`${path}/backups`), 201);
    const done = await waitForBackup(owner.api, `${path}/backups`, backup.id);
    assert.equal(done.status, 'completed', done.error);
    // In place: the live server held, the restored data checked, adopted and swapped in.
    const restore = expectData<CreatedRestore>(
      await owner.api.post(`${path}/backups/${backup.id}/restore`),
      201,
    );
    const finished = await waitForRestore(owner.api, path, restore.restore_id);
    assert.equal(finished.status, 'completed', finished.error ?? '');

    assert.equal(await psql(url, CALLERS_SQL), '', 'nothing planted ran in their sessions');
    // The restored database is the planted one, trap and all.
    await psql(url, SPRING_SQL);
    assert.equal(await psql(url, CALLERS_SQL), connection.user);
  });
});
