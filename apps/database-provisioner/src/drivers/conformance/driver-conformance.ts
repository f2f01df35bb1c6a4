import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { checkTlsLogin, reserveWal, startBaseBackup } from '@pgcloud/postgres';
import { eventually } from '@pgcloud/testing';
import pg from 'pg';
import type {
  DatabaseDriver,
  RestoreArchive,
  RestoreSpec,
  ServerEndpoint,
  ServerSpec,
} from '../database-driver.js';
import { CorruptArchiveError, REPLICATION_ROLE } from '../database-driver.js';
import { RestoreSources, WalReceiver } from './restore-sources.js';
import { sizeSettings } from '../server-size.js';

/** One driver, on its platform, as the conformance suite drives it. */
export interface ConformanceHarness {
  driver: DatabaseDriver;
  /** The region new servers go to. */
  region: string;
  /** A port for a new server (the provisioner's range). */
  port(): Promise<number>;
  pgBinDir: string;
  /** Takes the server away as a lost machine or pod would: its postmaster killed. */
  lose(serverId: string): Promise<void>;
  stop(): Promise<void>;
}

const CONFIG = { cpu: 1, memory: 0.5, storage: 1 };

/**
 * What every driver must do, run against real servers: made and reached over verified TLS,
 * sized, read-only and writable again, limits kept, base backups by the replication role,
 * back after the server is lost, quarantined and purged, deleted. Both drivers pass it
 * (local.conformance.int-spec.ts, kubernetes.conformance.int-spec.ts).
 */
export function driverConformance(name: string, start: () => Promise<ConformanceHarness>): void {
  describe(`${name} driver conformance`, () => {
    let harness: ConformanceHarness;
    let spec: ServerSpec;
    let endpoint: ServerEndpoint;
    let caPem: string;

    before(async () => {
      harness = await start();
      await harness.driver.prepare();
      caPem = await harness.driver.caCertificate();
      spec = {
        serverId: `srv_${randomBytes(10).toString('hex')}`,
        port: await harness.port(),
        region: harness.region,
        databaseName: 'conformance_db',
        password: randomBytes(24).toString('base64url'),
        replicationPassword: randomBytes(24).toString('base64url'),
        config: CONFIG,
      };
    });

    after(async () => {
      await harness?.driver.destroy(spec.serverId).catch(() => undefined);
      await harness?.stop();
    });

    /** Work as the application role over TLS verified against the CA and the host. */
    async function asApp<T>(work: (client: pg.Client) => Promise<T>, tls = true): Promise<T> {
      const client = new pg.Client({
        host: endpoint.host,
        port: endpoint.port,
        user: spec.databaseName,
        database: spec.databaseName,
        password: spec.password,
        ssl: tls ? { ca: caPem, rejectUnauthorized: true } : false,
        connectionTimeoutMillis: 5000,
      });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return await work(client);
      } finally {
        await client.end().catch(() => undefined);
      }
    }

    const rows = (): Promise<{ n: number }[]> =>
      asApp(
        async (client) =>
          (await client.query<{ n: number }>('SELECT n FROM marks ORDER BY n')).rows,
      );

    it('makes a server the application role reaches over verified TLS, and only so', async () => {
      endpoint = await harness.driver.create(spec);
      assert.equal(endpoint.port, spec.port);
      const login = { ...endpoint, database: spec.databaseName, user: spec.databaseName };
      assert.equal(await checkTlsLogin({ ...login, password: spec.password, caPem }), true);
      await assert.rejects(
        checkTlsLogin({ ...login, password: 'wrong', caPem }),
        (err: { code?: string }) => err.code === '28P01',
      );
      await assert.rejects(
        asApp(() => Promise.resolve(), false),
        (err: { code?: string }) => err.code === '28000',
        'refused without TLS',
      );
      await asApp(async (client) => {
        await client.query('CREATE TABLE marks (n int)');
        await client.query('INSERT INTO marks VALUES (1)');
      });
      assert.deepEqual(await rows(), [{ n: 1 }]);
      assert.equal(await harness.driver.state(spec.serverId), 'running');
      assert.ok((await harness.driver.list()).includes(spec.serverId));
    });

    it('sizes the server from its config', async () => {
      const expected = sizeSettings(CONFIG);
      const shown = await asApp(async (client) => {
        const { rows: found } = await client.query<{ name: string; setting: string }>(
          `SELECT name, current_setting(name) AS setting FROM pg_settings
            WHERE name IN ('shared_buffers', 'max_parallel_workers')`,
        );
        return Object.fromEntries(found.map((row) => [row.name, row.setting]));
      });
      assert.deepEqual(shown, {
        shared_buffers: expected.shared_buffers,
        max_parallel_workers: String(expected.max_parallel_workers),
      });
    });

    it('treats a second create as done, keeping the server and its data', async () => {
      assert.deepEqual(await harness.driver.create(spec), endpoint);
      assert.deepEqual(await rows(), [{ n: 1 }]);
    });

    it('makes the server read-only for every new transaction, then writable again', async () => {
      await harness.driver.setReadOnly(spec.serverId, true);
      await assert.rejects(
        asApp((client) => client.query('INSERT INTO marks VALUES (2)')),
        (err: { code?: string }) => err.code === '25006',
      );
      await harness.driver.setReadOnly(spec.serverId, false);
      await asApp((client) => client.query('INSERT INTO marks VALUES (2)'));
      assert.deepEqual(await rows(), [{ n: 1 }, { n: 2 }]);
    });

    it('measures the bytes its databases take and resets settings that lift read-only', async () => {
      const before = await harness.driver.usedBytes(spec.serverId);
      assert.ok(before > 1_000_000, `${before} bytes`);
      await asApp((client) =>
        client.query(
          "CREATE TABLE filler AS SELECT repeat('x', 1000) AS pad FROM generate_series(1, 20000)",
        ),
      );
      const grown = await harness.driver.usedBytes(spec.serverId);
      assert.ok(grown >= before + 10_000_000, `${before} -> ${grown} bytes`);
      await asApp((client) =>
        client.query(`ALTER ROLE ${spec.databaseName} SET default_transaction_read_only = off`),
      );
      const limits = { databaseName: spec.databaseName, storageGib: CONFIG.storage, atLimit: true };
      const changed = await harness.driver.enforceLimits(spec.serverId, limits);
      assert.ok(
        changed.some((change) => change.startsWith('reset default_transaction_read_only')),
        changed.join('; '),
      );
      assert.deepEqual(await harness.driver.enforceLimits(spec.serverId, limits), []);
    });

    it('gives the replication role a base backup over verified TLS', async () => {
      const backup = await startBaseBackup({
        pgBinDir: harness.pgBinDir,
        source: { ...endpoint, user: REPLICATION_ROLE, password: spec.replicationPassword, caPem },
      });
      let bytes = 0;
      for await (const chunk of backup.archive) bytes += (chunk as Buffer).length;
      const info = await backup.finished;
      assert.match(info.startLsn, /^[0-9A-F]+\/[0-9A-F]+$/);
      assert.ok(bytes > 100_000, `${bytes} bytes of archive`);
    });

    /** The replication role's login, as backup-service and pitr-worker use it. */
    const replication = () => ({
      ...endpoint,
      user: REPLICATION_ROLE,
      password: spec.replicationPassword,
      caPem,
    });

    it('counts the WAL a replication slot keeps on its disk as used, until the slot goes', async () => {
      const reservation = await reserveWal(replication());
      try {
        const before = await harness.driver.usedBytes(spec.serverId);
        // About 24 MB of WAL, and no table left to show for it.
        await asApp((client) =>
          client.query(
            "CREATE TABLE churn AS SELECT repeat('w', 1000) AS pad FROM generate_series(1, 20000); " +
              'DROP TABLE churn',
          ),
        );
        const held = await harness.driver.usedBytes(spec.serverId);
        assert.ok(held >= before + 15_000_000, `${before} -> ${held} bytes with the slot`);
        await reservation.release(); // the slot goes with its session, a moment later
        await eventually(async () => {
          const freed = await harness.driver.usedBytes(spec.serverId);
          assert.ok(freed <= held - 15_000_000, `${held} -> ${freed} bytes without it`);
        });
      } finally {
        await reservation.release();
      }
    });

    /** What restore.jobs does with a built restore: swapped in, checked, finished, opened. */
    async function restoreInPlace(restore: Omit<RestoreSpec, 'serverId' | 'restoreId'>) {
      const restoreId = `rst_${randomBytes(8).toString('hex')}`;
      const { driver } = harness;
      await driver.holdForRestore(spec.serverId);
      const built = await driver.buildRestore({ ...restore, serverId: spec.serverId, restoreId });
      assert.equal(await driver.restoreSwapped(spec.serverId, restoreId), false);
      assert.deepEqual(await driver.swapInRestore(spec.serverId, restoreId), endpoint);
      assert.equal(await driver.restoreSwapped(spec.serverId, restoreId), true);
      const login = { ...endpoint, database: spec.databaseName, user: spec.databaseName };
      assert.equal(await checkTlsLogin({ ...login, password: spec.password, caPem }), true);
      await driver.finishRestore(spec.serverId);
      await driver.setReadOnly(spec.serverId, false);
      return built;
    }

    const restoreOf = (archive: RestoreArchive) => ({
      archive,
      archivedDatabaseName: spec.databaseName,
      databaseName: spec.databaseName,
      password: spec.password,
      replicationPassword: spec.replicationPassword,
    });

    it('holds a server for a restore: reads go on, no write whatever the client sends', async () => {
      await harness.driver.holdForRestore(spec.serverId);
      await harness.driver.holdForRestore(spec.serverId); // held already
      await assert.rejects(
        asApp(async (client) => {
          await client.query('BEGIN READ WRITE');
          await client.query('INSERT INTO marks VALUES (9)');
        }),
        // A standby refuses BEGIN READ WRITE itself (0A000), a read-only default the write.
        (err: { code?: string }) => err.code === '0A000' || err.code === '25006',
      );
      assert.deepEqual(await rows(), [{ n: 1 }, { n: 2 }]);
      await harness.driver.abandonRestore(spec.serverId);
      await harness.driver.setReadOnly(spec.serverId, false);
      await asApp((client) => client.query('INSERT INTO marks VALUES (3)'));
      assert.deepEqual(await rows(), [{ n: 1 }, { n: 2 }, { n: 3 }]);
    });

    it('restores to a point in time through archived WAL, inclusive of the target, replaying while it comes', async () => {
      const sources = await RestoreSources.start();
      const receiver = await WalReceiver.start(harness.pgBinDir, replication());
      try {
        const archive = await sources.baseBackup(harness.pgBinDir, replication());
        const marked = await asApp(async (client) => {
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
        const lsn = await asApp(async (client) => {
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
        await harness.driver.abandonRestore(spec.serverId);
        await harness.driver.setReadOnly(spec.serverId, false);
        assert.deepEqual(await rows(), [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }]);

        // One that comes late is waited for: replay goes on once it is in.
        sources.delay(marked, 2000);
        const built = await restoreTo();
        assert.ok(built.walFilesApplied >= 2, `${built.walFilesApplied} segments`);
        assert.deepEqual(await rows(), [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
        await asApp((client) =>
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
        const archive = await sources.baseBackup(harness.pgBinDir, replication());
        await asApp((client) => client.query('INSERT INTO marks VALUES (7)'));
        await restoreInPlace(restoreOf(archive));
        const restored = [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 6 }];
        assert.deepEqual(await rows(), restored);
        await asApp((client) => client.query('INSERT INTO marks VALUES (8)'));

        const corrupt = { ...archive, sha256: '0'.repeat(64) };
        await assert.rejects(restoreInPlace(restoreOf(corrupt)), CorruptArchiveError);
        await harness.driver.abandonRestore(spec.serverId);
        await harness.driver.setReadOnly(spec.serverId, false);
        await asApp((client) => client.query('INSERT INTO marks VALUES (9)'));
        assert.deepEqual(await rows(), [...restored, { n: 8 }, { n: 9 }]);
      } finally {
        await sources.stop();
      }
    });

    /** Until the server has sent WAL up to `lsn` to a receiver that flushed it. */
    async function receivedUpTo(lsn: string): Promise<void> {
      const client = new pg.Client({
        ...replication(),
        database: 'postgres',
        ssl: { ca: caPem, rejectUnauthorized: true },
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

    it('brings a lost server back when reconciled, data intact', async () => {
      await harness.lose(spec.serverId);
      // What the reconciler does: a server that does not answer is started again.
      const deadline = Date.now() + 60_000;
      for (;;) {
        if ((await harness.driver.state(spec.serverId)) !== 'running') {
          assert.deepEqual(await harness.driver.ensureRunning(spec.serverId), endpoint);
          break;
        }
        // A platform that restarts lost servers itself may have done so already.
        if (
          await rows().then(
            () => true,
            () => false,
          )
        )
          break;
        assert.ok(Date.now() < deadline, 'the lost server was never seen');
        await delay(200);
      }
      assert.equal(await harness.driver.state(spec.serverId), 'running');
      // What the restores before left.
      assert.deepEqual(
        (await rows()).map((row) => row.n),
        [1, 2, 3, 4, 6, 8, 9],
      );
    });

    it('sets a quarantined server aside, off the list, and purges it later', async () => {
      const other: ServerSpec = {
        ...spec,
        serverId: `srv_${randomBytes(10).toString('hex')}`,
        port: await harness.port(),
      };
      const otherEndpoint = await harness.driver.create(other);
      await harness.driver.quarantine(other.serverId);
      // Stopped once quarantine returns: nothing writes to it any more.
      await assert.rejects(
        checkTlsLogin({
          ...otherEndpoint,
          database: other.databaseName,
          user: other.databaseName,
          password: other.password,
          caPem,
        }),
      );
      assert.ok(!(await harness.driver.list()).includes(other.serverId));
      // Gone for reconcile (its record, if any, goes `failed`), never started again.
      assert.equal(await harness.driver.state(other.serverId), 'missing');
      await assert.rejects(harness.driver.ensureRunning(other.serverId), /does not exist/);
      assert.deepEqual(await harness.driver.purgeQuarantined(new Date(Date.now() - 60_000)), []);
      const purged = await harness.driver.purgeQuarantined(new Date(Date.now() + 60_000));
      assert.ok(purged.includes(other.serverId), purged.join(', '));
      assert.equal(await harness.driver.state(other.serverId), 'missing');
    });

    it('destroys the server, and again without complaint', async () => {
      await harness.driver.destroy(spec.serverId);
      assert.equal(await harness.driver.state(spec.serverId), 'missing');
      assert.ok(!(await harness.driver.list()).includes(spec.serverId));
      await assert.rejects(rows());
      await harness.driver.destroy(spec.serverId);
    });
  });
}
