import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedRestore, Database } from '@pgcloud/contracts';
import type { Stack } from '@pgcloud/devstack';
import { eventually } from '@pgcloud/testing';
import { expectData } from '../support/assertions.js';
import { psql } from '../support/databases.js';
import { waitForRestore } from '../support/restores.js';
import {
  GIB,
  WRITE_REFUSED,
  fenceStack,
  fill,
  refusedWhenUp,
  smallDatabase,
  storageState,
} from '../support/storage-fill.js';

/**
 * A cleanup window closes at once when the data keeps growing, and a restore that brings
 * the data under lifts the fence (the fence itself: storage-fence.suite.ts).
 */
describe('the storage fence, again and lifted', () => {
  let stack: Stack;

  before(async () => {
    // Fenced past 1.34 GB, and while a window is open past 1.61 GB.
    stack = await fenceStack(25, 60);
  });

  after(async () => {
    await stack?.stop();
  });

  it('fences again at once when a window is used to write more; a restore lifts it', async () => {
    const { owner, path, url, backupId } = await smallDatabase(stack, 'fence-again');
    const filling = fill(url, 1_000_000);
    await storageState(owner, path, 'fenced');
    await filling;

    expectData<Database>(await owner.api.post(`${path}/storage/cleanup`), 200);
    // Past twice the grace (1.61 GB) while the window is open: fenced again at once.
    const more = fill(url, 250_000); // about 475 MB more
    const again = await storageState(owner, path, 'fenced', 60_000);
    assert.ok(again.storage.used_bytes > 1.5 * GIB, `${again.storage.used_bytes} bytes`);
    assert.equal(again.storage.cleanup_until, undefined, 'the window is closed');
    await more;
    await refusedWhenUp(
      url,
      'BEGIN READ WRITE; INSERT INTO kept VALUES (0); COMMIT',
      WRITE_REFUSED,
    );

    // A restore to a backup taken before the filling brings it under: the fence lifts.
    const restore = expectData<CreatedRestore>(
      await owner.api.post(`${path}/backups/${backupId}/restore`),
      201,
    );
    const done = await waitForRestore(owner.api, path, restore.restore_id);
    assert.equal(done.status, 'completed', done.error);
    await eventually(
      async () => {
        const database = expectData<Database>(await owner.api.get(path), 200);
        assert.equal(database.status, 'running');
        assert.equal(database.storage.state, 'ok');
        assert.ok(database.storage.used_bytes < 0.1 * GIB);
      },
      { timeoutMs: 10_000 },
    );
    await psql(url, 'INSERT INTO kept VALUES (101)');
    assert.equal(await psql(url, 'SELECT count(*) FROM kept'), '101');
  });
});
