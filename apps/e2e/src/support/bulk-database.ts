import assert from 'node:assert/strict';
import type { ConnectionDetails, CreatedBackup, Project } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { eventuallyDefined, signIn } from '@pgcloud/testing';
import { expectData } from './assertions.js';
import { waitForBackup } from './backups.js';
import { psql, runningDatabase } from './databases.js';
import { recoveryWindow, waitForArchive } from './pitr.js';
import { newClient, sharedStack, uniqueLogin } from './shared-stack.js';

// About 300 MB of table and index, written as about as much WAL.
const ROWS = 2_400_000;
export const COUNT_SQL = 'SELECT count(*) FROM bulk';

/** A database of a few hundred MB on the shared stack, with PITR on through its load. */
export interface BulkDatabase {
  owner: SignedIn;
  project: Project;
  connection: ConnectionDetails;
  /** `/projects/<id>/databases/bulk`. */
  path: string;
  /** Its rows, as COUNT_SQL answers. */
  rows: string;
  /** After the load, before any backup but PITR's own: a PITR restore replays it all. */
  loadedAt: string;
}

/**
 * Makes the database `bulk` for a new user: PITR first (its base backup is small, and the
 * load's WAL is what a PITR restore replays), then the load, then a recovery window that
 * covers it.
 */
export async function bulkDatabase(login: string): Promise<BulkDatabase> {
  await sharedStack();
  const owner = await signIn(await newClient(), uniqueLogin(login));
  const project = expectData<Project>(await owner.api.post('/projects', { name: 'bulky' }), 201);
  const { connection } = await runningDatabase(owner.api, project.id, 'bulk');
  const path = `/projects/${project.id}/databases/bulk`;
  expectData(await owner.api.post(`${path}/pitr/enable`, { retention_days: 1 }), 200);
  await waitForArchive(owner.api, `${path}/pitr`);
  await psql(
    connection.connection_string,
    `CREATE TABLE bulk (id bigint PRIMARY KEY, a text NOT NULL, b text NOT NULL);
     INSERT INTO bulk SELECT g, md5(g::text), md5((-g)::text) FROM generate_series(1, ${ROWS}) g;`,
    180_000,
  );
  const rows = await psql(connection.connection_string, COUNT_SQL);
  assert.equal(rows, String(ROWS));
  const loadedAt = new Date().toISOString();
  await eventuallyDefined('the window covers the load', async () => {
    const window = await recoveryWindow(owner.api, `${path}/pitr`);
    return window.to && window.to > loadedAt ? window : undefined;
  });
  return { owner, project, connection, path, rows, loadedAt };
}

/** Takes a manual backup of the bulk database and waits until it completed; answers its id. */
export async function bulkBackup(bulk: BulkDatabase): Promise<string> {
  const backups = `${bulk.path}/backups`;
  const backup = expectData<CreatedBackup>(await bulk.owner.api.post(backups), 201);
  const done = await waitForBackup(bulk.owner.api, backups, backup.id, undefined, 300_000);
  assert.equal(done.status, 'completed', done.error);
  return backup.id;
}
