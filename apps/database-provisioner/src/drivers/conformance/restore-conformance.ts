import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { checkTlsLogin } from '@pgcloud/postgres';
import pg from 'pg';
import type { RestoreArchive, RestoreSpec } from '../database-driver.js';
import { CorruptArchiveError } from '../database-driver.js';
import type { ConformanceServer } from './conformance-server.js';
import { RestoreSources, WalReceiver } from './restore-sources.js';

/**
 * The restores every driver must do, on the conformance suite's server: held for a
 * restore, to a point in time through archived WAL, from a base backup in place, a
 * corrupt backup refused. Registered inside the suite, in its order.
 */
export function restoreConformance(server: ConformanceServer): void {
  /** What restore.jobs does with a built restore: swapped in, checked, finished, opened. */
  async function restoreInPlace(restore: Omit<RestoreSpec, 'serverId' | 'restoreId'>) {
    const restoreId = `rst_${randomBytes(8).toString('hex')}`;
    const { driver } = server.harness;
    await driver.holdForRestore(server.spec.serverId);
    const built = await driver.buildRestore({
      ...restore,
      serverId: server.spec.serverId,
      restoreId,
    });
    assert.equal(await driver.restoreSwapped(server.spec.serverId, restoreId), false);
    assert.deepEqual(await driver.swapInRestore(server.spec.serverId, restoreId), server.endpoint);
    assert.equal(await driver.restoreSwapped(server.spec.serverId, restoreId), true);
    assert.equal(await checkTlsLogin(server.appLogin()), true);
    await driver.finishRestore(server.spec.serverId);
    await driver.setReadOnly(server.spec.serverId, false);
    return built;
  }

  const restoreOf = (archive: RestoreArchive) => ({
    archive,
    archivedDatabaseName: server.spec.databaseName,
    databaseName: server.spec.databaseName,
    password: server.spec.password,
    replicationPassword: server.spec.replicationPassword,
  });

  it('holds a server for a restore: reads go on, no write whatever the client sends', async () => {
    await server.harness.driver.holdForRestore(server.spec.serverId);
    await server.harness.driver.holdForRestore(server.spec.serverId); // held already
    await assert.rejects(
      server.asApp(async (client) => {
        await client.query('BEGIN READ WRITE');
        await client.query('INSERT INTO marks VALUES (9)');
      }),
      // A standby refuses BEGIN READ WRITE itself (0A000), a read-only default the write.
      (err: { code?: string }) => err.code === '0A000' || err.code === '25006',
    );
    assert.deepEqual(await server.rows(), [{ n: 1 }, { n: 2 }]);
    await server.harness.driver.abandonRestore(server.spec.serverId);
    await server.harness.driver.setReadOnly(server.spec.serverId, false);
    await server.asApp((client) => client.query('INSERT INTO marks VALUES (3)'));
    assert.deepEqual(await server.rows(), [{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('restores to a point in time through archived WAL, inclusive of the target, replaying while it comes', async () => {
    const sources = await RestoreSources.start();
    const receiver = await WalReceiver.start(server.harness.pgBinDir, server.replication());
    try {
      const archive = await sources.baseBackup(server.harness.pgBinDir, server.replication());
      const marked = await server.asApp(async (client) => {
        await client.query('INSERT INTO marks VALUES (4)');
        const { rows: found } = await client.query<{ name: string }>(
          'SELECT pg_walfile_name(pg_current_wal_lsn()) AS name',
        );
        // More than a segment of WAL after it: mark 4's segment is archived whole, and
        // the target and mark 5 lie in later ones.
        await client.query(
          'CREATE TABLE wal_filler AS SELECT repeat(md5(g::text), 32) AS t FROM generate_series(1, 20000) g',
        );
        return found[0].name;
      });
      await delay(1100);
      const targetTime = new Date().toISOString();
      await delay(1100);
      const lsn = await server.asApp(async (client) => {
        await client.query('INSERT INTO marks VALUES (5)');
        const { rows: found } = await client.query<{ lsn: string }>(
          'SELECT pg_current_wal_lsn()::text AS lsn',
        );
        return found[0].lsn;
      });
      await receivedUpTo(lsn);
      await receiver.stop();
      const segments = await sources.segments(receiver);
      assert.ok(
        segments.slice(0, -1).some((s) => s.name === marked),
        'archived whole',
      );
      const restoreTo = () =>
        restoreInPlace({
          ...restoreOf(archive),
          recovery: { segments, target: { time: targetTime } },
        });

      // A segment that cannot be fetched fails the restore: recovery never stops short of
      // its target for want of it, and the server stays as it was.
      sources.fail(marked);
      await assert.rejects(restoreTo());
      await server.harness.driver.abandonRestore(server.spec.serverId);
      await server.harness.driver.setReadOnly(server.spec.serverId, false);
      assert.deepEqual(await server.rows(), [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }]);

      // One that comes late is waited for: replay goes on once it is in.
      sources.delay(marked, 2000);
      const built = await restoreTo();
      assert.ok(built.walFilesApplied >= 2, `${built.walFilesApplied} segments`);
      assert.deepEqual(await server.rows(), [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
      await server.asApp((client) =>
        client.query('DROP TABLE wal_filler; INSERT INTO marks VALUES (6)'),
      );
    } finally {
      await receiver.remove();
      await sources.stop();
    }
  });

  it('restores a base backup in place, and refuses a corrupt one leaving the server as it was', async () => {
    const sources = await RestoreSources.start();
    try {
      const archive = await sources.baseBackup(server.harness.pgBinDir, server.replication());
      await server.asApp((client) => client.query('INSERT INTO marks VALUES (7)'));
      await restoreInPlace(restoreOf(archive));
      const restored = [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 6 }];
      assert.deepEqual(await server.rows(), restored);
      await server.asApp((client) => client.query('INSERT INTO marks VALUES (8)'));

      const corrupt = { ...archive, sha256: '0'.repeat(64) };
      await assert.rejects(restoreInPlace(restoreOf(corrupt)), CorruptArchiveError);
      await server.harness.driver.abandonRestore(server.spec.serverId);
      await server.harness.driver.setReadOnly(server.spec.serverId, false);
      await server.asApp((client) => client.query('INSERT INTO marks VALUES (9)'));
      assert.deepEqual(await server.rows(), [...restored, { n: 8 }, { n: 9 }]);
    } finally {
      await sources.stop();
    }
  });

  /** Until the server has sent WAL up to `lsn` to a receiver that flushed it. */
  async function receivedUpTo(lsn: string): Promise<void> {
    const client = new pg.Client({
      ...server.replication(),
      database: 'postgres',
      ssl: { ca: server.caPem, rejectUnauthorized: true },
    });
    await client.connect();
    try {
      for (let tries = 0; ; tries++) {
        const { rows: found } = await client.query<{ done: boolean }>(
          'SELECT flush_lsn >= $1::pg_lsn AS done FROM pg_stat_replication',
          [lsn],
        );
        if (found.some((row) => row.done)) return;
        assert.ok(tries < 100, `the receiver never flushed ${lsn}`);
        await delay(100);
      }
    } finally {
      await client.end();
    }
  }
}
