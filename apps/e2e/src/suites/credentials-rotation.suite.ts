import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConnectionDetails, CreatedBackup, CreatedRestore } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import pg from 'pg';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, waitForStatus } from '../support/databases.js';
import { markersIn, upTo } from '../support/markers.js';
import { DRILL_MARKERS, PitrDrill } from '../support/pitr-drill.js';
import { waitForRestore } from '../support/restores.js';
import { sharedStack } from '../support/shared-stack.js';

/**
 * Rotating a database's password (docs/api/databases.md#credentials): the old one is
 * refused at once, the new one works and `/url` answers it, and backups, PITR and restores
 * go on as before.
 */
describe('credentials rotation', () => {
  let stack: Stack;
  let drill: PitrDrill;
  let metadata: pg.Client;
  let before_: ConnectionDetails;
  let after_: ConnectionDetails;

  const refused = async (connectionString: string) => {
    const error = await psql(connectionString, 'SELECT 1').then(
      () => undefined,
      (err: Error & { stderr?: string }) => err.stderr ?? err.message,
    );
    assert.match(error ?? 'it logged in', /password authentication failed/);
  };

  before(async () => {
    stack = await sharedStack();
    metadata = new pg.Client({ connectionString: stack.env['DATABASE_URL'] });
    await metadata.connect();
    drill = await PitrDrill.start();
    before_ = drill.connection;
  });

  after(async () => {
    await metadata?.end();
  });

  it('refuses the old password at once; the new one works, and /url answers it', async () => {
    const session = new pg.Client({
      connectionString: before_.connection_string.replace('sslmode=require', ''),
      ssl: { rejectUnauthorized: false },
    });
    await session.connect();
    try {
      after_ = expectData<ConnectionDetails>(
        await drill.owner.api.post(`${drill.path}/credentials/rotate`),
        200,
      );
      assert.notEqual(after_.connection_string, before_.connection_string);
      assert.equal(after_.host, before_.host);
      assert.equal(after_.port, before_.port);
      await refused(before_.connection_string);
      assert.deepEqual(await markersIn(after_.connection_string), upTo(DRILL_MARKERS));
      const url = expectData<ConnectionDetails>(
        await drill.owner.api.get(`${drill.path}/url`),
        200,
      );
      assert.deepEqual(url, after_);
      // A session opened before goes on.
      assert.equal((await session.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one, 1);
    } finally {
      await session.end();
    }
    const { rows } = await metadata.query(
      `SELECT payload FROM provisioner.outbox
        WHERE event = 'database.credentials_rotated' AND payload->>'database_id' = $1`,
      [drill.database.id],
    );
    assert.equal(rows.length, 1);
    expectError(
      await drill.owner.api.post(`/projects/${drill.project.id}/databases/nope/credentials/rotate`),
      404,
      'DATABASE_NOT_FOUND',
    );
  });

  it('keeps PITR, backups and restores working, with the new password', async () => {
    // The archive went on: a marker written with the new password comes back.
    await psql(after_.connection_string, 'INSERT INTO markers (k) VALUES (500)');
    const copy = await drill.restoreCopy('latest');
    assert.deepEqual(copy.markers, [...upTo(DRILL_MARKERS), 500]);

    const backupsPath = `${drill.path}/backups`;
    const made = expectData<CreatedBackup>(await drill.owner.api.post(backupsPath), 201);
    const backup = await waitForBackup(drill.owner.api, backupsPath, made.id);
    assert.equal(backup.status, 'completed', backup.error);
    await psql(after_.connection_string, 'INSERT INTO markers (k) VALUES (1000)');
    const restore = expectData<CreatedRestore>(
      await drill.owner.api.post(`${backupsPath}/${backup.id}/restore`),
      201,
    );
    const done = await waitForRestore(drill.owner.api, drill.path, restore.restore_id);
    assert.equal(done.status, 'completed', done.error);
    await waitForStatus(drill.owner.api, drill.project.id, 'drill', ['running']);
    // The restored server takes the password of now, not the one in the backup's data.
    assert.deepEqual(await markersIn(after_.connection_string), [...upTo(DRILL_MARKERS), 500]);
    await refused(before_.connection_string);
  });
});
