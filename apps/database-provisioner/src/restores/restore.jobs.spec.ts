import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '@pgcloud/contracts';
import { CorruptArchiveError } from '../drivers/database-driver.js';
import {
  fakeTlsLogins,
  PLAN,
  TARGET_TIME,
  World,
  fail,
  permanent,
  run,
} from './restore.jobs.fixture.js';

describe('RestoreJobs', () => {
  fakeTlsLogins();

  it('restores in place: held, planned by backup-service, receiver paused, built, swapped, finished', async () => {
    const world = new World();
    world.addRestore();

    await run(world);

    assert.deepEqual(world.steps, [
      'restore running (1)',
      'lock srv_1',
      'hold srv_1',
      'backup plan bkp_1',
      'pause receiver db_1',
      'build srv_1',
      'swap srv_1',
      'finish srv_1',
      'read-only false srv_1',
      'unlock srv_1',
      'restore completed (1)',
      'database db_1 running (1)',
      'announce db_1 running',
      'event restore.finished',
    ]);
    assert.equal(world.built?.recovery, undefined);
    assert.deepEqual(world.built?.archive, {
      url: PLAN.base_backup_url,
      sha256: PLAN.base_backup_sha256,
    });
    assert.deepEqual(world.events[0]?.payload, {
      restore_id: 'rst_1',
      database_id: 'db_1',
      project_id: 'prj_1',
      in_place: true,
      status: 'completed',
    });
  });

  it('restores a point in time into a new database: made meanwhile, planned by pitr-worker, replayed', async () => {
    const world = new World();
    world.addRestore('db_2');

    await run(world);

    assert.deepEqual(world.steps.slice(1, 10), [
      'lock srv_2',
      'create srv_2 app_db_2',
      `pitr plan db_1 ${TARGET_TIME}`,
      'made srv_2',
      'build srv_2',
      'swap srv_2',
      'finish srv_2',
      'read-only false srv_2',
      'unlock srv_2',
    ]);
    assert.equal(world.built?.archivedDatabaseName, 'app_db_1');
    assert.equal(world.built?.databaseName, 'app_db_2');
    assert.deepEqual(world.built?.recovery?.target, { time: TARGET_TIME });
    assert.equal(world.built?.recovery?.segments[0]?.sizeBytes, 9);
    assert.equal(world.restores.get('rst_1')?.walFilesApplied, 7);
    assert.equal(world.databases.get('db_2')?.status, 'running');
    assert.equal(world.databases.get('db_1')?.status, 'running', 'the source is not touched');
    assert.equal(world.events[0]?.payload.in_place, false);
    assert.equal(world.events[0]?.payload.database_id, 'db_2');
  });

  it("makes a new database's server while the build downloads, which waits for it", async () => {
    const world = new World();
    world.addRestore('db_2');
    world.making = new Promise((resolve) => setTimeout(resolve, 20));

    await run(world);

    assert.deepEqual(world.steps.slice(2, 7), [
      'create srv_2 app_db_2',
      `pitr plan db_1 ${TARGET_TIME}`,
      'build srv_2',
      'made srv_2',
      'swap srv_2',
    ]);
  });

  it("fails with the reason a new database's server could not be made, its build stopped", async () => {
    const world = new World();
    world.addRestore('db_2');
    world.making = new Promise((resolve) => setTimeout(resolve, 20));
    world.createError = new Error('no port left');

    await assert.rejects(run(world), /no port left/);
    assert.equal(world.built?.signal?.aborted, true, 'the build is told to stop');
    assert.ok(!world.steps.some((step) => step.startsWith('swap')));
    await fail(world, 'error');
    assert.ok(world.steps.includes('destroy srv_2'), 'the half-made server goes');
    assert.equal(world.restores.get('rst_1')?.status, 'failed');
  });

  it("shows its phases in order, with the plan's totals and the bytes downloaded", async () => {
    const world = new World();
    world.addRestore();
    world.downloads = [1000, 2500, PLAN.base_backup_size_bytes];

    await run(world);

    assert.deepEqual(world.phases, ['downloading', 'replaying', 'checking', 'swapping', 'done']);
    const record = world.restores.get('rst_1');
    assert.equal(record?.bytesTotal, PLAN.base_backup_size_bytes);
    assert.equal(record?.bytesDone, PLAN.base_backup_size_bytes);
    assert.equal(record?.walFilesTotal, 0, 'a backup restore replays no archived WAL');
    assert.equal(record?.etaSeconds, 0, 'nothing is left once done');
  });

  it("counts a point-in-time restore's WAL: the plan's segments, all through once replayed", async () => {
    const world = new World();
    world.addRestore('db_2');

    await run(world);

    assert.deepEqual(world.phases.at(-1), 'done');
    const record = world.restores.get('rst_1');
    // Replay went through 7 segments (the fake driver's count), more than the plan's one.
    assert.equal(record?.walFilesDone, 7);
    assert.equal(record?.walFilesTotal, 7);
    assert.equal(record?.walFilesApplied, 7);
  });

  it('keeps the phase a restore failed in', async () => {
    const world = new World();
    world.addRestore();
    world.buildError = new CorruptArchiveError('checksum mismatch');

    await assert.rejects(run(world), permanent('corrupt-archive'));
    await fail(world, 'corrupt-archive');

    assert.deepEqual(world.phases, ['downloading']);
    assert.equal(world.restores.get('rst_1')?.phase, 'downloading');
    assert.equal(world.restores.get('rst_1')?.status, 'failed');
  });

  it('carries on a restore a crash left swapped in, without building it again', async () => {
    const world = new World();
    world.addRestore(undefined, 'running');
    world.swapped = true;

    await run(world);

    assert.deepEqual(world.steps.slice(0, 6), [
      'restore running (0)',
      'lock srv_1',
      'swap srv_1',
      'finish srv_1',
      'read-only false srv_1',
      'unlock srv_1',
    ]);
  });

  it('fails for good on a refused plan, a link off the store or a corrupt archive; retries when nobody answered', async () => {
    const refused = new World();
    refused.addRestore();
    refused.planError = new DomainError('BACKUP_NOT_FOUND', 'gone');
    await assert.rejects(run(refused), permanent('no-plan'));
    assert.ok(!refused.steps.some((s) => s.startsWith('pause') || s.startsWith('build')));

    const elsewhere = new World();
    elsewhere.addRestore();
    elsewhere.planExtra = { base_backup_url: 'http://169.254.169.254/latest/meta-data/' };
    await assert.rejects(run(elsewhere), permanent('no-plan'));
    assert.ok(!elsewhere.steps.some((s) => s.startsWith('pause') || s.startsWith('build')));

    const silent = new World();
    silent.addRestore();
    silent.planError = new DomainError('SERVICE_UNAVAILABLE', 'no answer');
    await assert.rejects(run(silent), (err) => err === silent.planError);

    const corrupt = new World();
    corrupt.addRestore();
    corrupt.buildError = new CorruptArchiveError('checksum mismatch');
    await assert.rejects(run(corrupt), permanent('corrupt-archive'));
    assert.ok(!corrupt.steps.some((s) => s.startsWith('swap')));
  });

  it('ends a restore at once when a database it acts on is being deleted', async () => {
    const world = new World();
    world.addRestore('db_2');
    world.databases.get('db_2')!.status = 'deleting';

    await run(world);

    assert.deepEqual(world.steps, ['restore running (1)', 'restore failed (1)']);
    assert.equal(world.restores.get('rst_1')?.error, 'A database the restore acts on was deleted.');
  });

  it('records nothing once the attempt lost the job', async () => {
    const world = new World();
    world.addRestore();
    world.holdsJob = false;

    await assert.rejects(run(world), /was lost/);

    assert.equal(world.restores.get('rst_1')?.status, 'running');
    assert.equal(world.databases.get('db_1')?.status, 'restoring');
    assert.deepEqual(world.events, []);
  });

  it('undoes a failed in-place restore: old data back, read-write, the source serving again', async () => {
    const world = new World();
    world.addRestore(undefined, 'running');

    await fail(world, 'corrupt-archive');

    assert.deepEqual(world.steps, [
      'restore failed (1)',
      'lock srv_1',
      'abandon srv_1',
      'read-only false srv_1',
      'unlock srv_1',
      'database db_1 running (1)',
      'announce db_1 running',
      'event restore.finished',
    ]);
    assert.match(world.restores.get('rst_1')?.error ?? '', /backup is corrupted/);
    assert.equal(world.databases.get('db_1')?.error, null);
    assert.equal(world.events[0]?.payload.status, 'failed');
    assert.equal(world.events[0]?.payload.in_place, true);
  });

  it('marks the database failed when even its old data could not be brought back', async () => {
    const world = new World();
    world.addRestore(undefined, 'running');
    world.undoError = new Error('pg_ctl: no such directory');

    await fail(world, 'exhausted');

    const record = world.databases.get('db_1');
    assert.equal(record?.status, 'failed');
    assert.match(record?.error ?? '', /could not be brought back/);
    assert.match(world.restores.get('rst_1')?.error ?? '', /database was left as it was/);
  });

  it('removes the new database of a failed restore, which ends failed', async () => {
    const world = new World();
    world.addRestore('db_2', 'running');

    await fail(world, 'exhausted');

    assert.ok(world.steps.includes('destroy srv_2'));
    assert.ok(!world.steps.some((s) => s.startsWith('abandon') || s.endsWith('srv_1')));
    const error = 'The restore could not be completed; the new database could not be made.';
    assert.equal(world.databases.get('db_2')?.status, 'failed');
    assert.equal(world.databases.get('db_2')?.error, error);
    assert.equal(world.databases.get('db_1')?.status, 'running');
  });

  it('ends a restore cancelled before it began without touching its data', async () => {
    const world = new World();
    world.addRestore();
    const restore = world.restores.get('rst_1');
    assert.ok(restore);
    restore.cancelRequestedAt = new Date();

    await assert.rejects(run(world), permanent('cancelled'));
    assert.ok(!world.steps.some((s) => s.startsWith('build') || s.startsWith('hold')));
    await fail(world, 'cancelled');

    assert.equal(restore.status, 'cancelled');
    assert.equal(restore.error, null);
    assert.ok(world.steps.includes('abandon srv_1'), 'the source goes off hold');
    assert.equal(world.databases.get('db_1')?.status, 'running');
    assert.equal(world.events[0]?.payload.status, 'cancelled');
  });

  it('never swaps a restore cancelled while it builds, and removes the database made for it', async () => {
    const world = new World();
    world.addRestore('db_2');
    world.duringBuild = () => {
      const restore = world.restores.get('rst_1');
      if (restore) restore.cancelRequestedAt = new Date();
    };

    await assert.rejects(run(world), permanent('cancelled'));
    assert.ok(world.steps.includes('build srv_2'));
    assert.ok(!world.steps.some((s) => s.startsWith('swap')), 'no swap after a cancel');
    assert.notEqual(world.restores.get('rst_1')?.phase, 'swapping');
    await fail(world, 'cancelled');

    assert.equal(world.restores.get('rst_1')?.status, 'cancelled');
    assert.ok(world.steps.includes('destroy srv_2'));
    assert.ok(world.steps.includes('remove db_2'), 'the new database goes');
    assert.equal(world.databases.get('db_1')?.status, 'running', 'the source is not touched');
  });

  it('leaves a restore that completed meanwhile as it is', async () => {
    const world = new World();
    world.addRestore(undefined, 'completed');

    await fail(world, 'exhausted');

    assert.deepEqual(world.steps, ['restore failed (0)']);
    assert.deepEqual(world.events, []);
  });
});
