import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { checkTlsLogin, reserveWal, startBaseBackup } from '@pgcloud/postgres';
import { eventually } from '@pgcloud/testing';
import type { ServerSpec } from '../database-driver.js';
import { REPLICATION_ROLE } from '../database-driver.js';
import { sizeSettings } from '../server-size.js';
import type { ConformanceHarness } from './conformance-server.js';
import { ConformanceServer } from './conformance-server.js';
import { restoreConformance } from './restore-conformance.js';

export type { ConformanceHarness } from './conformance-server.js';

const CONFIG = { cpu: 1, memory: 0.5, storage: 1 };

/**
 * What every driver must do, run against real servers: made and reached over verified TLS,
 * sized, read-only and writable again, limits kept, base backups by the replication role,
 * back after the server is lost, quarantined and purged, deleted. Both drivers pass it
 * (local.conformance.int-spec.ts, kubernetes.conformance.int-spec.ts).
 */
export function driverConformance(name: string, start: () => Promise<ConformanceHarness>): void {
  describe(`${name} driver conformance`, () => {
    const server = new ConformanceServer();

    before(async () => {
      server.harness = await start();
      await server.harness.driver.prepare();
      server.caPem = await server.harness.driver.caCertificate();
      server.spec = {
        serverId: `srv_${randomBytes(10).toString('hex')}`,
        port: await server.harness.port(),
        region: server.harness.region,
        databaseName: 'conformance_db',
        password: randomBytes(24).toString('base64url'),
        replicationPassword: randomBytes(24).toString('base64url'),
        config: CONFIG,
      };
    });

    after(async () => {
      await server.harness?.driver.destroy(server.spec.serverId).catch(() => undefined);
      await server.harness?.stop();
    });

    it('makes a server the application role reaches over verified TLS, and only so', async () => {
      server.endpoint = await server.harness.driver.create(server.spec);
      assert.equal(server.endpoint.port, server.spec.port);
      assert.equal(await checkTlsLogin(server.appLogin()), true);
      await assert.rejects(
        checkTlsLogin(server.appLogin('wrong')),
        (err: { code?: string }) => err.code === '28P01',
      );
      await assert.rejects(
        server.asApp(() => Promise.resolve(), false),
        (err: { code?: string }) => err.code === '28000',
        'refused without TLS',
      );
      await server.asApp(async (client) => {
        await client.query('CREATE TABLE marks (n int)');
        await client.query('INSERT INTO marks VALUES (1)');
      });
      assert.deepEqual(await server.rows(), [{ n: 1 }]);
      assert.equal(await server.harness.driver.state(server.spec.serverId), 'running');
      assert.ok((await server.harness.driver.list()).includes(server.spec.serverId));
    });

    it('sizes the server from its config', async () => {
      const expected = sizeSettings(CONFIG);
      const shown = await server.asApp(async (client) => {
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
      assert.deepEqual(await server.harness.driver.create(server.spec), server.endpoint);
      assert.deepEqual(await server.rows(), [{ n: 1 }]);
    });

    it('makes the server read-only for every new transaction, then writable again', async () => {
      await server.harness.driver.setReadOnly(server.spec.serverId, true);
      await assert.rejects(
        server.asApp((client) => client.query('INSERT INTO marks VALUES (2)')),
        (err: { code?: string }) => err.code === '25006',
      );
      await server.harness.driver.setReadOnly(server.spec.serverId, false);
      await server.asApp((client) => client.query('INSERT INTO marks VALUES (2)'));
      assert.deepEqual(await server.rows(), [{ n: 1 }, { n: 2 }]);
    });

    it('measures the bytes its databases take and resets settings that lift read-only', async () => {
      const before = await server.harness.driver.usedBytes(server.spec.serverId);
      assert.ok(before > 1_000_000, `${before} bytes`);
      await server.asApp((client) =>
        client.query(
          "CREATE TABLE filler AS SELECT repeat('x', 1000) AS pad FROM generate_series(1, 20000)",
        ),
      );
      const grown = await server.harness.driver.usedBytes(server.spec.serverId);
      assert.ok(grown >= before + 10_000_000, `${before} -> ${grown} bytes`);
      await server.asApp((client) =>
        client.query(
          `ALTER ROLE ${server.spec.databaseName} SET default_transaction_read_only = off`,
        ),
      );
      const limits = {
        databaseName: server.spec.databaseName,
        storageGib: CONFIG.storage,
        atLimit: true,
      };
      const changed = await server.harness.driver.enforceLimits(server.spec.serverId, limits);
      assert.ok(
        changed.some((change) => change.startsWith('reset default_transaction_read_only')),
        changed.join('; '),
      );
      assert.deepEqual(await server.harness.driver.enforceLimits(server.spec.serverId, limits), []);
    });

    it('gives the replication role a base backup over verified TLS', async () => {
      const backup = await startBaseBackup({
        pgBinDir: server.harness.pgBinDir,
        source: {
          ...server.endpoint,
          user: REPLICATION_ROLE,
          password: server.spec.replicationPassword,
          caPem: server.caPem,
        },
      });
      let bytes = 0;
      for await (const chunk of backup.archive) bytes += (chunk as Buffer).length;
      const info = await backup.finished;
      assert.match(info.startLsn, /^[0-9A-F]+\/[0-9A-F]+$/);
      assert.ok(bytes > 100_000, `${bytes} bytes of archive`);
    });

    it('counts the WAL a replication slot keeps on its disk as used, until the slot goes', async () => {
      const reservation = await reserveWal(server.replication());
      try {
        const before = await server.harness.driver.usedBytes(server.spec.serverId);
        // About 24 MB of WAL, and no table left to show for it.
        await server.asApp((client) =>
          client.query(
            "CREATE TABLE churn AS SELECT repeat('w', 1000) AS pad FROM generate_series(1, 20000); " +
              'DROP TABLE churn',
          ),
        );
        const held = await server.harness.driver.usedBytes(server.spec.serverId);
        assert.ok(held >= before + 15_000_000, `${before} -> ${held} bytes with the slot`);
        await reservation.release(); // the slot goes with its session, a moment later
        await eventually(async () => {
          const freed = await server.harness.driver.usedBytes(server.spec.serverId);
          assert.ok(freed <= held - 15_000_000, `${held} -> ${freed} bytes without it`);
        });
      } finally {
        await reservation.release();
      }
    });

    restoreConformance(server);

    it('brings a lost server back when reconciled, data intact', async () => {
      await server.harness.lose(server.spec.serverId);
      // What the reconciler does: a server that does not answer is started again.
      const deadline = Date.now() + 60_000;
      for (;;) {
        if ((await server.harness.driver.state(server.spec.serverId)) !== 'running') {
          assert.deepEqual(
            await server.harness.driver.ensureRunning(server.spec.serverId),
            server.endpoint,
          );
          break;
        }
        // A platform that restarts lost servers itself may have done so already.
        if (
          await server.rows().then(
            () => true,
            () => false,
          )
        )
          break;
        assert.ok(Date.now() < deadline, 'the lost server was never seen');
        await delay(200);
      }
      assert.equal(await server.harness.driver.state(server.spec.serverId), 'running');
      // What the restores before left.
      assert.deepEqual(
        (await server.rows()).map((row) => row.n),
        [1, 2, 3, 4, 6, 8, 9],
      );
    });

    it('sets a quarantined server aside, off the list, and purges it later', async () => {
      const other: ServerSpec = {
        ...server.spec,
        serverId: `srv_${randomBytes(10).toString('hex')}`,
        port: await server.harness.port(),
      };
      const otherEndpoint = await server.harness.driver.create(other);
      await server.harness.driver.quarantine(other.serverId);
      // Stopped once quarantine returns: nothing writes to it any more.
      await assert.rejects(
        checkTlsLogin({
          ...otherEndpoint,
          database: other.databaseName,
          user: other.databaseName,
          password: other.password,
          caPem: server.caPem,
        }),
      );
      assert.ok(!(await server.harness.driver.list()).includes(other.serverId));
      // Gone for reconcile (its record, if any, goes `failed`), never started again.
      assert.equal(await server.harness.driver.state(other.serverId), 'missing');
      await assert.rejects(server.harness.driver.ensureRunning(other.serverId), /does not exist/);
      assert.deepEqual(
        await server.harness.driver.purgeQuarantined(new Date(Date.now() - 60_000)),
        [],
      );
      const purged = await server.harness.driver.purgeQuarantined(new Date(Date.now() + 60_000));
      assert.ok(purged.includes(other.serverId), purged.join(', '));
      assert.equal(await server.harness.driver.state(other.serverId), 'missing');
    });

    it('destroys the server, and again without complaint', async () => {
      await server.harness.driver.destroy(server.spec.serverId);
      assert.equal(await server.harness.driver.state(server.spec.serverId), 'missing');
      assert.ok(!(await server.harness.driver.list()).includes(server.spec.serverId));
      await assert.rejects(server.rows());
      await server.harness.driver.destroy(server.spec.serverId);
    });
  });
}
