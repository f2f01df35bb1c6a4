import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '@pgcloud/contracts';
import { loadLauncherEnv, newRunId } from '@pgcloud/devstack';
import { ensureMetadataSchema } from '@pgcloud/postgres';
import { runMigrations } from '@pgcloud/testing';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { DatabaseEntity } from '../databases/database.entity.js';
import { withAdvisoryLock } from '../databases/server-lock.repository.js';
import { CreateDatabases1763780000000 } from '../migrations/1763780000000-create-databases.js';
import { RestoreDrills1765200000000 } from '../migrations/1765200000000-restore-drills.js';
import { DrillEntity } from './drill.entity.js';
import { drillSlotStart } from './drill-schedule.js';
import { addDueDrills } from './drill-scheduler.js';
import { DrillSlots } from './drill-slots.js';
import { DrillsRepository } from './drills.repository.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The drill schedule and slots on real PostgreSQL: a simulated day of ticks from two
 * replicas makes one drill per database and period, spread over the day; two replicas'
 * drills never run more at once than the deployment's limit.
 */
describe('drill schedule and slots', { timeout: 60_000 }, () => {
  const databaseUrl = new URL(loadLauncherEnv().DATABASE_URL);
  databaseUrl.pathname = `/pgcloud_test_${newRunId().replace(/-/g, '_')}`;
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const replicas = [0, 1].map(
    () =>
      new DataSource({
        type: 'postgres',
        url: databaseUrl.toString(),
        entities: [DrillEntity, DatabaseEntity],
      }),
  );

  before(async () => {
    await ensureMetadataSchema(databaseUrl.toString(), 'provisioner');
    await runMigrations(databaseUrl.toString(), 'provisioner', [
      CreateDatabases1763780000000,
      RestoreDrills1765200000000,
    ]);
    for (const replica of replicas) await replica.initialize();
  });

  after(async () => {
    for (const replica of replicas) if (replica.isInitialized) await replica.destroy();
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${databaseUrl.pathname.slice(1)}" WITH (FORCE)`);
    await client.end();
  });

  it('makes one drill per database and period, at its own offset, whichever replica ticks', async () => {
    const repositories = replicas.map((replica) => new DrillsRepository(replica));
    const databases = Array.from({ length: 48 }, () => newId('db'));
    const start = Date.UTC(2026, 10, 28);
    // Two days of ticks every 10 minutes, both replicas at once.
    for (let now = start; now < start + 2 * DAY; now += 10 * MINUTE) {
      const due = databases.map((databaseId) => ({
        databaseId,
        slotMs: drillSlotStart(databaseId, now, DAY),
      }));
      await Promise.all(repositories.map((drills) => addDueDrills(drills, due, 'req_test')));
      // Each drill ends before the next slot (as a running one blocks another of its database).
      await replicas[0]?.query(
        `UPDATE provisioner.drills SET status = 'passed' WHERE status = 'pending'`,
      );
    }
    const rows = await replicas[0]?.query<{ database_id: string; scheduled_for: Date }[]>(
      `SELECT database_id, scheduled_for FROM provisioner.drills WHERE kind = 'automated'`,
    );
    assert.ok(rows);
    const perDatabase = new Map<string, number[]>();
    for (const row of rows)
      perDatabase.set(row.database_id, [
        ...(perDatabase.get(row.database_id) ?? []),
        row.scheduled_for.getTime(),
      ]);
    for (const databaseId of databases) {
      const slots = (perDatabase.get(databaseId) ?? []).sort((a, b) => a - b);
      // The slot running at the first tick, and one a day after each.
      assert.ok(slots.length === 2 || slots.length === 3, `${databaseId}: ${slots.length}`);
      for (let i = 1; i < slots.length; i++)
        assert.equal((slots[i] ?? 0) - (slots[i - 1] ?? 0), DAY);
    }
    // Spread: 48 databases' hours of the day, 2 an hour on average, never a crowd in one.
    const perHour = new Array<number>(24).fill(0);
    for (const slots of perDatabase.values()) {
      const hour = new Date(slots[0] ?? 0).getUTCHours();
      perHour[hour] = (perHour[hour] ?? 0) + 1;
    }
    assert.ok(Math.max(...perHour) <= 10, `at most 10 databases in one hour: ${perHour.join(',')}`);
    assert.ok(
      perHour.filter((n) => n > 0).length >= 12,
      `spread over the day: ${perHour.join(',')}`,
    );
    const jobs = await replicas[0]?.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM provisioner.jobs WHERE type = 'database.drill'`,
    );
    assert.equal(jobs?.[0]?.n, rows.length, 'every drill has its job');
  });

  it('runs at most DRILL_CONCURRENCY drills at once across replicas, after the restores', async () => {
    let running = 0;
    let most = 0;
    let restoresWaiting = true;
    const slotsOf = (replica: DataSource) =>
      new DrillSlots(
        (name, work, options) => withAdvisoryLock(replica, name, work, options),
        2,
        () => Promise.resolve(restoresWaiting),
        50,
      );
    const drill = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 150));
      running--;
    };
    const signal = new AbortController().signal;
    const drills = replicas.flatMap((replica) => {
      const slots = slotsOf(replica);
      return [0, 1, 2].map(() => slots.run(signal, drill));
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(most, 0, 'no drill starts while a restore waits for a worker');
    restoresWaiting = false;
    await Promise.all(drills);
    assert.equal(most, 2);
  });
});
