import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedBackup, Project, RequestContext, Restore } from '@pgcloud/contracts';
import { BACKUP_PATTERNS, DomainError, RESTORE_PATTERNS } from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';
import type { SignedIn } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { runningDatabase } from '../support/databases.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

/**
 * What one service asserts to another is checked by the one that owns the records: a
 * message sent straight to the provisioner's queue, as backup-service sends it, cannot
 * restore another user's backup into the sender's own database, and backup-service
 * answers a backup's plan only for the database it was taken of.
 */
describe('calls between services: the callee checks what the caller asserts', () => {
  let victim: SignedIn;
  let attacker: SignedIn;
  let attackerProject: Project;
  let theirBackup: string;
  let ownBackup: string;
  let ownDatabaseId: string;
  let provisioner: ServiceClient;
  let backups: ServiceClient;
  let sent = 0;
  const ctxOf = (who: SignedIn): RequestContext => ({
    requestId: `callee-checks-${process.pid}-${sent++}`,
    userId: who.user.id,
    tier: 'free',
  });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => err,
    );

  /** A database with one completed backup: its id and the backup's. */
  const backedUp = async (who: SignedIn, project: Project, name: string) => {
    const { database } = await runningDatabase(who.api, project.id, name);
    const path = `/projects/${project.id}/databases/${name}/backups`;
    const backup = expectData<CreatedBackup>(await who.api.post(path), 201);
    const done = await waitForBackup(who.api, path, backup.id);
    assert.equal(done.status, 'completed', done.error);
    return { databaseId: database.id, backupId: backup.id };
  };

  before(async () => {
    const stack = await sharedStack();
    victim = await signIn(await newClient(), uniqueLogin('victim'));
    attacker = await signIn(await newClient(), uniqueLogin('intruder'));
    const victimProject = expectData<Project>(
      await victim.api.post('/projects', { name: 'vault' }),
      201,
    );
    attackerProject = expectData<Project>(
      await attacker.api.post('/projects', { name: 'own' }),
      201,
    );
    const [theirs, own] = await Promise.all([
      backedUp(victim, victimProject, 'ledger'),
      backedUp(attacker, attackerProject, 'mine'),
    ]);
    theirBackup = theirs.backupId;
    ownBackup = own.backupId;
    ownDatabaseId = own.databaseId;
    provisioner = stack.rawClient('databases', 10_000);
    backups = stack.rawClient('backups', 10_000);
  });

  after(async () => {
    await Promise.all([provisioner?.close(), backups?.close()]);
  });

  it("refuses a restore of another user's backup into one's own database, before any effect", async () => {
    const mine = { project_id: attackerProject.id, name: 'mine' };
    for (const into of [{}, { target_database: 'stolen' }]) {
      const request = { ...mine, kind: 'backup', backup_id: theirBackup, ...into };
      for (const pattern of [RESTORE_PATTERNS.create, RESTORE_PATTERNS.check]) {
        const body =
          pattern === RESTORE_PATTERNS.check
            ? { ...request, base_backup_size_bytes: 1, wal_files: 0 }
            : request;
        const answer = await refusal(provisioner.send(pattern.pattern, ctxOf(attacker), body));
        assert.ok(
          answer instanceof DomainError && answer.code === 'BACKUP_NOT_FOUND',
          `${pattern.pattern} ${JSON.stringify(into)}: ${String(answer)}`,
        );
      }
    }
    // Nothing of it: no restore, no new database, the database as it was.
    const path = `/projects/${attackerProject.id}/databases`;
    const restores = expectData<{ restores: Restore[] }>(
      await attacker.api.get(`${path}/mine/restores`),
      200,
    );
    assert.deepEqual(restores.restores, []);
    expectError(await attacker.api.get(`${path}/stolen`), 404, 'DATABASE_NOT_FOUND');
    const database = expectData<{ status: string }>(await attacker.api.get(`${path}/mine`), 200);
    assert.equal(database.status, 'running');
  });

  it('answers the same call for a backup of the database itself', async () => {
    const answer = await provisioner.send(RESTORE_PATTERNS.check.pattern, ctxOf(attacker), {
      project_id: attackerProject.id,
      name: 'mine',
      kind: 'backup',
      backup_id: ownBackup,
      target_database: 'copy',
      base_backup_size_bytes: 1,
      wal_files: 0,
    });
    assert.equal(typeof (answer as { estimated_seconds: number }).estimated_seconds, 'number');
  });

  it("answers a backup's plan only for the database it was taken of", async () => {
    const answer = await refusal(
      backups.send(BACKUP_PATTERNS.restorePlan.pattern, ctxOf(attacker), {
        backup_id: theirBackup,
        database_id: ownDatabaseId,
      }),
    );
    assert.ok(answer instanceof DomainError && answer.code === 'BACKUP_NOT_FOUND', String(answer));
    const plan = await backups.send(BACKUP_PATTERNS.restorePlan.pattern, ctxOf(attacker), {
      backup_id: ownBackup,
      database_id: ownDatabaseId,
    });
    assert.match((plan as { base_backup_sha256: string }).base_backup_sha256, /^[0-9a-f]{64}$/);
  });
});
