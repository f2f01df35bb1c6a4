import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedBackup, Project, RequestContext, Restore } from '@pgcloud/contracts';
import {
  BACKUP_PATTERNS,
  DATABASE_PATTERNS,
  DomainError,
  RESTORE_PATTERNS,
} from '@pgcloud/contracts';
import type { ServiceClient } from '@pgcloud/messaging';
import { queueName } from '@pgcloud/messaging';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { signIn } from '@pgcloud/testing';
import amqp from 'amqplib';
import { expectData, expectError } from '../support/assertions.js';
import { parsePrometheusText, sumOf } from '../support/prometheus-text.js';
import { waitForBackup } from '../support/backups.js';
import { runningDatabase } from '../support/databases.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

/**
 * Calls between services, sent straight to a service's queue with the broker logins of the
 * stack's apps. A service answers a pattern only from the apps it allows, told by the
 * login the broker vouches for (a `user-id` naming another login never gets past the
 * broker). What one service asserts to another is checked by the one that owns the
 * records: a message sent as backup-service sends it cannot restore another user's backup
 * into the sender's own database, and backup-service answers a backup's plan only for the
 * database it was taken of.
 */
describe('calls between services: senders proven, callees check what callers assert', () => {
  let stack: Stack;
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
    stack = await sharedStack();
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
    provisioner = stack.rawClient('databases', 10_000, 'backup-service');
    backups = stack.rawClient('backups', 10_000, 'database-provisioner');
  });

  /** The provisioner's count of refused messages of `pattern` from `sender`. */
  const refusedCount = async (pattern: string, sender: string): Promise<number> => {
    const response = await fetch(`${stack.managementUrl('database-provisioner')}/metrics`);
    return sumOf(parsePrometheusText(await response.text()), 'pgcloud_rpc_refused_total', {
      pattern,
      sender,
    });
  };

  /** The attacker's own database as the API shows it. */
  const ownDatabase = async (): Promise<{ status: string }> =>
    expectData<{ status: string }>(
      await attacker.api.get(`/projects/${attackerProject.id}/databases/mine`),
      200,
    );

  it('refuses a pattern from an app it does not allow, before any effect, and counts it', async () => {
    const ref = { project_id: attackerProject.id, name: 'mine' };
    const asPitrWorker = stack.rawClient('databases', 10_000, 'pitr-worker');
    try {
      const before = await refusedCount(DATABASE_PATTERNS.url.pattern, 'pitr-worker');
      const url = await refusal(
        asPitrWorker.send(DATABASE_PATTERNS.url.pattern, ctxOf(attacker), ref),
      );
      assert.ok(url instanceof DomainError && url.code === 'FORBIDDEN', String(url));
      assert.equal(await refusedCount(DATABASE_PATTERNS.url.pattern, 'pitr-worker'), before + 1);
      // A pattern only the gateway sends, from backup-service: the database stays.
      const deleted = await refusal(
        provisioner.send(DATABASE_PATTERNS.delete.pattern, ctxOf(attacker), ref),
      );
      assert.ok(deleted instanceof DomainError && deleted.code === 'FORBIDDEN', String(deleted));
      assert.equal((await ownDatabase()).status, 'running');
      assert.match(
        stack.logOf('database-provisioner'),
        /databases\.url refused: sent by broker login pitr-worker \(pitr-worker\), which may not send it/,
      );
      // The same calls from the apps they are declared for.
      const asGateway = stack.rawClient('databases', 10_000);
      try {
        const details = await asGateway.send(DATABASE_PATTERNS.url.pattern, ctxOf(attacker), ref);
        assert.match((details as { connection_string: string }).connection_string, /^postgres/);
      } finally {
        await asGateway.close();
      }
      const source = await asPitrWorker.send(
        DATABASE_PATTERNS.backupSource.pattern,
        ctxOf(attacker),
        { database_id: ownDatabaseId },
      );
      assert.equal(typeof (source as { port: number }).port, 'number');
    } finally {
      await asPitrWorker.close();
    }
  });

  it("refuses at the broker a message naming another app's login as its sender", async () => {
    const connection = await amqp.connect(stack.brokerUrl('pitr-worker'));
    connection.on('error', () => undefined);
    try {
      const channel = await connection.createConfirmChannel();
      const closed = new Promise<unknown>((resolve) => channel.on('error', resolve));
      const queue = queueName(stack.env['RMQ_QUEUE_PREFIX'] ?? '', 'databases');
      const message = {
        pattern: DATABASE_PATTERNS.delete.pattern,
        data: {
          ctx: ctxOf(attacker),
          payload: { project_id: attackerProject.id, name: 'mine' },
        },
      };
      channel.sendToQueue(queue, Buffer.from(JSON.stringify(message)), { userId: 'api-gateway' });
      assert.match(String(await closed), /PRECONDITION_FAILED.*user_id/i);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal((await ownDatabase()).status, 'running');
    } finally {
      await connection.close().catch(() => undefined);
    }
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
