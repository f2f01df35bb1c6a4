import { DATABASE_PATTERNS } from '@pgcloud/contracts';
import type { BackupSource } from '@pgcloud/contracts';
import { answer, fakeRpcClient, metricValue } from '@pgcloud/testing';
import assert from 'node:assert/strict';
import { before, beforeEach, describe, it } from 'node:test';
import { register } from 'prom-client';
import { Logger } from '@nestjs/common';
import type { BackupStatusChanged, RequestContext } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { Job, JobRunnerOptions } from '@pgcloud/jobs';
import { JobRunner, PermanentJobError } from '@pgcloud/jobs';
import type { Outbox } from '@pgcloud/messaging';
import type { ObjectStore } from '@pgcloud/storage';
import type { BackupServiceConfig } from '../config.js';
import type { BackupMove, BackupMoveFields } from './backup-lifecycle.js';
import { BACKUP_MOVES, backupMayMove } from './backup-lifecycle.js';
import { BackupEntity } from './backup.entity.js';
import { BackupJobs } from './backup.jobs.js';
import type { BackupRemoval } from './backup-removal.js';
import type { BackupsRepository, Transaction } from './backups.repository.js';
import type { BaseBackupUploader, UploadedBackup } from './base-backup.uploader.js';

const KEY = 'projects/prj_1/databases/db_1/base/bkp_1.tar.zst';
const UPLOADED: UploadedBackup = {
  sizeBytes: 4096,
  checksumSha256: 'ab'.repeat(32),
  startLsn: '0/2000028',
  endLsn: '0/2000100',
  timeline: 1,
};

/**
 * The backups table (behind BackupsRepository), the jobs table's answer to holdJob, S3,
 * the provisioner and the event bus, in memory; `steps` tells what reached the outside,
 * in order.
 */
class World {
  backups = new Map<string, BackupEntity>();
  steps: string[] = [];
  published: BackupStatusChanged[] = [];
  /** Whether the attempt still holds the job when it records the result. */
  holdsJob = true;
  sourceError: Error | undefined;
  /** Runs while the upload streams: what others do to the record meanwhile. */
  meanwhile: () => void = () => undefined;
  /** The runner's transaction, as onFailed gets it. */
  tx = {} as Transaction;

  addBackup(status: BackupEntity['status'] = 'pending'): BackupEntity {
    const backup = Object.assign(new BackupEntity(), {
      id: 'bkp_1',
      databaseId: 'db_1',
      projectId: 'prj_1',
      status,
      objectKey: KEY,
      error: null,
    });
    this.backups.set(backup.id, backup);
    return backup;
  }

  jobs(): BackupJobs {
    const tx = (this.tx = {
      // holdJob's SELECT ... FOR UPDATE on the jobs table.
      query: () => Promise.resolve(this.holdsJob ? [{ id: 'job_1' }] : []),
    } as unknown as Transaction);
    // The repository's move as it is: refused before any write when the lifecycle's table
    // does not hold it, else the table's status written where the status is one of `from`.
    const move = (
      _tx: Transaction,
      id: string,
      name: BackupMove,
      fields: BackupMoveFields = {},
      from: readonly BackupEntity['status'][] = BACKUP_MOVES[name].from,
    ) => {
      const refused = from.filter((status) => !backupMayMove(status, name));
      if (refused.length > 0) throw new Error(`a backup cannot ${name} from ${refused.join(', ')}`);
      const { to } = BACKUP_MOVES[name];
      const found = [...this.backups.values()].filter(
        (b) => b.id === id && from.includes(b.status),
      );
      for (const backup of found) Object.assign(backup, { status: to, ...fields });
      this.steps.push(`record ${to} (${found.length})`);
      return Promise.resolve(found.length === 1);
    };
    const find = (id: string) => {
      const found = this.backups.get(id);
      return Promise.resolve(found ? { ...found } : null);
    };
    const repository = {
      transaction: (work: (t: Transaction) => Promise<unknown>) => work(tx),
      jobRunner: (options: Omit<JobRunnerOptions, 'dataSource'>) =>
        new JobRunner({ ...options, dataSource: {} as JobRunnerOptions['dataSource'] }),
      move,
      find,
    } as unknown as BackupsRepository;
    const rpc = fakeRpcClient(
      answer(DATABASE_PATTERNS.backupSource, () =>
        this.sourceError
          ? Promise.reject(this.sourceError)
          : Promise.resolve({
              host: 'h',
              port: 5432,
              user: 'r',
              password: 'p',
              ca_pem: 'ca',
            } as BackupSource),
      ),
    );
    const uploader = {
      upload: (_source: unknown, key: string) => {
        this.steps.push(`upload ${key}`);
        this.meanwhile();
        return Promise.resolve(UPLOADED);
      },
    } as unknown as BaseBackupUploader;
    const store = {
      ensureBucket: () => Promise.resolve(),
      abortIncompleteUploads: (key: string) => {
        this.steps.push(`abort uploads ${key}`);
        return Promise.resolve(0);
      },
      delete: (key: string) => {
        this.steps.push(`delete ${key}`);
        return Promise.resolve();
      },
    } as unknown as ObjectStore;
    const removal = {
      remove: (id: string) => {
        this.steps.push(`remove ${id}`);
        this.backups.delete(id);
        return Promise.resolve();
      },
    } as unknown as BackupRemoval;
    const outbox = {
      add: (
        _manager: unknown,
        _event: unknown,
        _ctx: RequestContext,
        payload: BackupStatusChanged,
      ) => {
        this.steps.push(`announce ${payload.status}`);
        this.published.push(payload);
        return Promise.resolve('evt');
      },
    } as unknown as Outbox;
    const config = { JOB_LEASE_SECONDS: 30, BACKUP_CONCURRENCY: 1 } as BackupServiceConfig;
    return new BackupJobs(rpc, repository, uploader, store, removal, outbox, config);
  }
}

function job(attempt = 1): Job<{ backup_id: string; request_id: string }> {
  return {
    id: 'job_1',
    type: 'backup.take',
    key: 'bkp_1',
    payload: { backup_id: 'bkp_1', request_id: 'req_1' },
    attempt,
    signal: new AbortController().signal,
  };
}

const permanent = (kind: string) => (err: unknown) =>
  err instanceof PermanentJobError && err.kind === kind;

describe('BackupJobs', () => {
  before(() => {
    Logger.overrideLogger(false);
  });

  it('takes a pending backup: old parts aborted, uploaded, then recorded and announced', async () => {
    const world = new World();
    world.addBackup('pending');

    await world.jobs().take(job());

    assert.deepEqual(world.steps, [
      'record running (1)',
      'announce running',
      `abort uploads ${KEY}`,
      `upload ${KEY}`,
      'record completed (1)',
      'announce completed',
    ]);
    const record = world.backups.get('bkp_1');
    assert.equal(record?.checksumSha256, UPLOADED.checksumSha256);
    assert.equal(record?.sizeBytes, UPLOADED.sizeBytes);
    assert.equal(record?.startLsn, UPLOADED.startLsn);
  });

  it('announces `running` once, not again on a retry', async () => {
    const world = new World();
    world.addBackup('running');

    await world.jobs().take(job(2));

    assert.deepEqual(
      world.published.map((p) => p.status),
      ['completed'],
    );
  });

  it('leaves a backup finished by an earlier attempt, or deleted, alone', async () => {
    const world = new World();
    await world.jobs().take(job());
    world.addBackup('completed');
    await world.jobs().take(job(2));

    assert.deepEqual(world.steps, ['record running (0)', 'record running (0)']);
  });

  it('records nothing and touches no object once the attempt lost the job', async () => {
    const world = new World();
    world.addBackup('pending');
    world.holdsJob = false;

    await assert.rejects(world.jobs().take(job()), /no longer held/);

    assert.equal(world.backups.get('bkp_1')?.status, 'running');
    assert.ok(!world.steps.some((s) => s.startsWith('delete')));
    assert.ok(!world.steps.includes('announce completed'));
  });

  it('removes the object of a backup deleted while it ran, not one another attempt completed', async () => {
    const deleted = new World();
    deleted.addBackup('pending');
    deleted.meanwhile = () => deleted.backups.delete('bkp_1');
    await deleted.jobs().take(job());
    assert.deepEqual(deleted.steps.slice(-2), ['record completed (0)', `delete ${KEY}`]);

    const completed = new World();
    const record = completed.addBackup('pending');
    completed.meanwhile = () => (record.status = 'completed');
    await completed.jobs().take(job());
    assert.ok(!completed.steps.some((s) => s.startsWith('delete')));
    assert.ok(!completed.steps.includes('announce completed'));
  });

  it('fails for good when the database is gone or not running; retries when no answer came', async () => {
    const gone = new World();
    gone.addBackup('pending');
    gone.sourceError = new DomainError('DATABASE_NOT_FOUND', 'gone');
    await assert.rejects(gone.jobs().take(job()), permanent('database-gone'));
    assert.ok(gone.steps.includes('remove bkp_1'), 'its backups go with the database');

    const stopped = new World();
    stopped.addBackup('pending');
    stopped.sourceError = new DomainError('DATABASE_NOT_READY', 'stopped');
    await assert.rejects(stopped.jobs().take(job()), permanent('database-not-running'));

    for (const error of [
      new DomainError('SERVICE_UNAVAILABLE', 'no answer'),
      new Error('broker closed'),
    ]) {
      const silent = new World();
      silent.addBackup('pending');
      silent.sourceError = error;
      await assert.rejects(silent.jobs().take(job()), (err) => err === error);
      assert.ok(!silent.steps.includes('remove bkp_1'));
    }
  });

  it('marks a failed backup with a reason for the API, removes its object and announces it', async () => {
    const world = new World();
    world.addBackup('running');
    const jobs = world.jobs();

    await jobs.failed(
      job(),
      { kind: 'database-not-running', reason: 'pg_basebackup: connection refused' },
      world.tx,
    );
    const record = world.backups.get('bkp_1');
    assert.equal(record?.status, 'failed');
    assert.equal(record?.error, 'The database was not running when the backup started.');
    assert.deepEqual(world.steps, [
      'record failed (1)',
      `abort uploads ${KEY}`,
      `delete ${KEY}`,
      'announce failed',
    ]);
    assert.equal(world.published[0]?.error, record?.error);
  });

  it('leaves a backup that completed meanwhile as it is when its job fails', async () => {
    const world = new World();
    world.addBackup('completed');

    const jobs = world.jobs();
    await jobs.failed(job(), { kind: 'exhausted', reason: 'lease lapsed' }, world.tx);

    assert.equal(world.backups.get('bkp_1')?.status, 'completed');
    assert.deepEqual(world.steps, ['record failed (0)']);
  });

  describe('metrics', () => {
    const seconds = (outcome: string) =>
      metricValue('pgcloud_backup_duration_seconds', { outcome }, '_count');
    beforeEach(() => {
      register.resetMetrics();
    });

    it('times a completed attempt and counts the bytes it uploaded', async () => {
      const world = new World();
      world.addBackup('pending');
      await world.jobs().take(job());

      assert.equal(await seconds('completed'), 1);
      assert.equal(await metricValue('pgcloud_backup_size_bytes', {}, '_count'), 1);
      assert.equal(await metricValue('pgcloud_backup_size_bytes', {}, '_sum'), 4096);
    });

    it('times failed and discarded attempts without counting bytes, and skips no-ops', async () => {
      const failed = new World();
      failed.addBackup('pending');
      failed.sourceError = new Error('broker closed');
      await assert.rejects(failed.jobs().take(job()));

      const deleted = new World();
      deleted.addBackup('pending');
      deleted.meanwhile = () => deleted.backups.delete('bkp_1');
      await deleted.jobs().take(job());

      const done = new World();
      done.addBackup('completed');
      await done.jobs().take(job(2));

      assert.equal(await seconds('failed'), 1);
      assert.equal(await seconds('discarded'), 1);
      assert.equal(await metricValue('pgcloud_backup_duration_seconds', {}, '_count'), 2);
      assert.equal(await metricValue('pgcloud_backup_size_bytes', {}, '_count'), 0);
    });
  });
});
