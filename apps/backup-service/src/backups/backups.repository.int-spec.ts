import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Isolation } from '@pgcloud/devstack';
import { ensureMetadataSchema } from '@pgcloud/postgres';
import { DataSource } from 'typeorm';
import { CreateBackups1763800000000 } from '../migrations/1763800000000-create-backups.js';
import { PitrBaseBackups1763920000000 } from '../migrations/1763920000000-pitr-base-backups.js';
import { BackupEntity } from './backup.entity.js';
import { BackupsRepository } from './backups.repository.js';

const HOUR_MS = 3_600_000;

describe('backup records on the real PostgreSQL', { timeout: 60_000 }, () => {
  const isolation = Isolation.create();
  const url = isolation.env['DATABASE_URL'] ?? '';
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    schema: 'backups',
    entities: [BackupEntity],
    migrations: [CreateBackups1763800000000, PitrBaseBackups1763920000000],
  });
  const records = new BackupsRepository(dataSource);
  let n = 0;
  /** A backup of `database` in `status`, made and (if completed) finished `ageMs` ago. */
  const backup = (database: string, status: string, ageMs: number): Promise<unknown> =>
    isolation.sql(
      `INSERT INTO backups.backups (id, database_id, project_id, owner_id, database_name, type,
                                    status, object_key, created_at, completed_at)
       VALUES ('bkp_${++n}', '${database}', 'prj_1', 'usr_1', '${database}', 'manual',
               '${status}', 'k${n}', now() - interval '${ageMs} milliseconds',
               ${status === 'completed' ? `now() - interval '${ageMs} milliseconds'` : 'NULL'})`,
    );

  before(async () => {
    await ensureMetadataSchema(url, 'backups');
    await dataSource.initialize();
    await dataSource.runMigrations();
  });
  after(async () => {
    await dataSource.destroy();
    await isolation.cleanup();
  });

  it('tells which databases were backed up since a moment, or have a backup under way', async () => {
    await backup('db_recent', 'completed', HOUR_MS / 2);
    await backup('db_old', 'completed', 3 * HOUR_MS);
    await backup('db_old', 'failed', HOUR_MS / 2);
    await backup('db_running', 'running', HOUR_MS / 2);
    await backup('db_stuck', 'pending', 3 * HOUR_MS);
    const since = new Date(Date.now() - 2 * HOUR_MS);
    const ids = ['db_recent', 'db_old', 'db_running', 'db_stuck', 'db_none'];
    assert.deepEqual([...(await records.backedUpSince(ids, since))].sort(), [
      'db_recent',
      'db_running',
    ]);
    assert.deepEqual([...(await records.backedUpSince([], since))], []);
  });
});
