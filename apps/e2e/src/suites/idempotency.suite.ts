import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  Backup,
  CreatedBackup,
  CreatedRestore,
  Database,
  Project,
  Restore,
} from '@pgcloud/contracts';
import type { ApiResponse, SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { ApiClient, signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { waitForStatus } from '../support/databases.js';
import { waitForRestore } from '../support/restores.js';
import { ownStack, uniqueLogin } from '../support/shared-stack.js';

const KEY = 'idempotency-key';
const REPLAYED = 'idempotent-replayed';

/** True for the answer to a request sent while the first with its key is being answered. */
function isInProgress(answer: ApiResponse): boolean {
  const body = answer.body as { error?: { code?: string } };
  return answer.status === 409 && body.error?.code === 'OPERATION_IN_PROGRESS';
}

/** Asserts that `answer` repeats `first`: same status, same body, marked as a replay. */
function expectReplayOf(answer: ApiResponse, first: ApiResponse): void {
  assert.equal(answer.status, first.status, JSON.stringify(answer.body));
  assert.equal(answer.headers.get(REPLAYED), 'true', 'a replay says so');
  assert.deepEqual(answer.body, first.body);
}

/**
 * Idempotency-Key (docs/api/idempotency.md) on a stack with two gateways sharing Redis, as
 * replicas behind a load balancer: a client that sends a creating POST again, at once or
 * later, through either gateway, gets the first answer and creates nothing more.
 */
describe('Idempotency-Key through two gateways', () => {
  let stack: Stack;
  let gateways: ApiClient[];
  let owner: SignedIn;
  let project: Project;
  let databasePath: string;
  let backupId: string;

  before(async () => {
    stack = await ownStack({
      REDIS_URL: 'redis://127.0.0.1:6379',
      // Every sign-in comes from 127.0.0.1 through either gateway.
      RATE_LIMIT_IP_BURST: '100',
      RATE_LIMIT_IP_PER_MINUTE: '6000',
      // Generous, so a busy machine does not turn a slow Redis answer into a 503 here.
      REDIS_TIMEOUT_MS: '2000',
    });
    gateways = [
      new ApiClient(stack.baseUrl),
      new ApiClient((await stack.startExtraGateway()).baseUrl),
    ];
    owner = await signIn(gateways[0], uniqueLogin('idempotent'));
  });

  after(async () => {
    await stack?.stop();
  });

  /** The owner's client on one of the two gateways. */
  function via(gateway: number, who: SignedIn = owner): ApiClient {
    return gateways[gateway % 2].withToken(who.token);
  }

  /**
   * Sends one POST with one key twice at once, one through each gateway, then once more
   * through each: exactly one answer is a first answer; the others at once are replays or
   * 409 OPERATION_IN_PROGRESS (the first still being answered), those after are replays.
   */
  async function sendFourTimes(path: string, body: unknown, key: string): Promise<ApiResponse> {
    const post = (gateway: number) => via(gateway).post(path, body, { headers: { [KEY]: key } });
    const atOnce = await Promise.all([post(0), post(1)]);
    const later = [await post(0), await post(1)];
    const firsts = [...atOnce, ...later].filter(
      (answer) => answer.headers.get(REPLAYED) === null && !isInProgress(answer),
    );
    assert.equal(
      firsts.length,
      1,
      `one first answer: ${JSON.stringify(atOnce.map((a) => a.body))}`,
    );
    const first = firsts[0];
    for (const answer of atOnce.filter((other) => other !== first)) {
      if (isInProgress(answer)) expectError(answer, 409, 'OPERATION_IN_PROGRESS');
      else expectReplayOf(answer, first);
    }
    for (const answer of later) expectReplayOf(answer, first);
    return first;
  }

  it('creates one project however often its POST comes', async () => {
    const first = await sendFourTimes('/projects', { name: 'idempotent' }, 'project-1');
    project = expectData<Project>(first, 201);
    const { projects } = expectData<{ projects: Project[] }>(await via(1).get('/projects'), 200);
    assert.deepEqual(
      projects.map((p) => p.id),
      [project.id],
    );
  });

  it('creates one database', async () => {
    const path = `/projects/${project.id}/databases`;
    const first = await sendFourTimes(path, { name: 'ledger' }, 'database-1');
    assert.equal(expectData<Database>(first, 201).name, 'ledger');
    const { databases } = expectData<{ databases: Database[] }>(await via(0).get(path), 200);
    assert.deepEqual(
      databases.map((d) => d.name),
      ['ledger'],
    );
    databasePath = `${path}/ledger`;
    await waitForStatus(via(0), project.id, 'ledger', ['running']);
  });

  it('takes one backup', async () => {
    const first = await sendFourTimes(`${databasePath}/backups`, undefined, 'backup-1');
    const created = expectData<CreatedBackup>(first, 201);
    const { backups } = expectData<{ backups: Backup[] }>(
      await via(1).get(`${databasePath}/backups`),
      200,
    );
    // The daily schedule may add an automated backup meanwhile; manual ones are ours.
    assert.deepEqual(
      backups.filter((b) => b.type === 'manual').map((b) => b.id),
      [created.id],
    );
    const backup = await waitForBackup(via(0), `${databasePath}/backups`, created.id);
    assert.equal(backup.status, 'completed', backup.error);
    backupId = backup.id;
  });

  it('starts one restore, into one new database', async () => {
    const first = await sendFourTimes(
      `${databasePath}/backups/${backupId}/restore`,
      { target_database: 'ledger-copy' },
      'restore-1',
    );
    const created = expectData<CreatedRestore>(first, 201);
    const { restores } = expectData<{ restores: Restore[] }>(
      await via(1).get(`${databasePath}/restores`),
      200,
    );
    assert.deepEqual(
      restores.map((r) => r.id),
      [created.restore_id],
    );
    const { databases } = expectData<{ databases: Database[] }>(
      await via(0).get(`/projects/${project.id}/databases`),
      200,
    );
    assert.deepEqual(databases.map((d) => d.name).sort(), ['ledger', 'ledger-copy']);
    const restore = await waitForRestore(via(0), databasePath, created.restore_id);
    assert.equal(restore.status, 'completed', restore.error);
  });

  it('refuses a key sent again with another body or path: 422, and creates nothing', async () => {
    const headers = { [KEY]: 'project-1' };
    expectError(
      await via(0).post('/projects', { name: 'another' }, { headers }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expectError(
      await via(1).post(`/projects/${project.id}/databases`, { name: 'another' }, { headers }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    const { projects } = expectData<{ projects: Project[] }>(await via(0).get('/projects'), 200);
    assert.deepEqual(
      projects.map((p) => p.name),
      ['idempotent'],
    );
    const { databases } = expectData<{ databases: Database[] }>(
      await via(1).get(`/projects/${project.id}/databases`),
      200,
    );
    assert.ok(!databases.some((d) => d.name === 'another'));
  });

  it("keeps each user's keys apart: the same key from another user is a request of its own", async () => {
    const other = await signIn(gateways[1], uniqueLogin('idempotent-other'));
    const theirs = await via(1, other).post(
      '/projects',
      { name: 'idempotent' },
      { headers: { [KEY]: 'project-1' } },
    );
    assert.equal(theirs.headers.get(REPLAYED), null);
    assert.notEqual(expectData<Project>(theirs, 201).id, project.id);
    const again = await via(0).post(
      '/projects',
      { name: 'idempotent' },
      { headers: { [KEY]: 'project-1' } },
    );
    assert.equal(expectData<Project>(again, 201).id, project.id, 'still the first answer');
  });

  it('replays a 4xx answer as it was', async () => {
    const post = (gateway: number) =>
      via(gateway).post('/projects', { name: 'idempotent' }, { headers: { [KEY]: 'taken-1' } });
    const first = await post(0);
    expectError(first, 409, 'PROJECT_NAME_TAKEN');
    expectReplayOf(await post(1), first);
  });

  it('refuses a malformed key with 400 VALIDATION_ERROR, and creates nothing', async () => {
    for (const key of ['', 'k'.repeat(256), 'caf\u00e9']) {
      const error = expectError(
        await via(0).post('/projects', { name: 'malformed' }, { headers: { [KEY]: key } }),
        400,
        'VALIDATION_ERROR',
      );
      assert.equal(error.details?.[0]?.field, 'Idempotency-Key', JSON.stringify(error));
    }
    const { projects } = expectData<{ projects: Project[] }>(await via(1).get('/projects'), 200);
    assert.ok(!projects.some((p) => p.name === 'malformed'));
  });
});
