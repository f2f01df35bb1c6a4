import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { CreatedBackup, Project, RestoreDryRun, Webhook } from '@pgcloud/contracts';
import type { ApiClient, SignedIn } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { psql, runningDatabase } from '../support/databases.js';
import { apiInventory } from '../support/fuzz/inventory.js';
import type { FuzzRoute, OpenApiDocument } from '../support/fuzz/routes.js';
import { routesOf } from '../support/fuzz/routes.js';
import { newClient, uniqueLogin } from '../support/shared-stack.js';

/**
 * Bodies no route may take for an absent one: JSON cut off mid-way (what a client's body
 * becomes when its connection or a proxy truncates it), and JSON whose top level is no object.
 */
const BAD_BODIES = ['{"target_database": "ledger-co', '{"name": "ledger', '[]', '"x"', '5'];
/** How each is sent: as JSON, with no Content-Type at all, and as plain text. */
const CONTENT_TYPES = ['application/json', undefined, 'text/plain'] as const;

const COUNT_SQL = 'SELECT count(*) FROM entries';

/**
 * A body the gateway cannot read is refused, never taken for no body: every route of
 * /openapi.json that takes one, required or optional, answers 400 VALIDATION_ERROR to its
 * owner and to another account alike (validation before existence), and nothing changes.
 */
describe('request bodies: unreadable is not absent', () => {
  let owner: SignedIn;
  let stranger: SignedIn;
  let project: Project;
  let databasePath: string;
  let connectionString: string;
  let backupId: string;
  let routes: FuzzRoute[];
  let webhookId: string;

  before(async () => {
    [owner, stranger] = await Promise.all([
      newClient().then((api) => signIn(api, uniqueLogin('bodies'))),
      newClient().then((api) => signIn(api, uniqueLogin('bodies-stranger'))),
    ]);
    project = expectData<Project>(await owner.api.post('/projects', { name: 'bodies' }), 201);
    ({
      connection: { connection_string: connectionString },
    } = await runningDatabase(owner.api, project.id, 'ledger'));
    databasePath = `/projects/${project.id}/databases/ledger`;
    await psql(
      connectionString,
      'CREATE TABLE entries (id serial PRIMARY KEY); INSERT INTO entries SELECT FROM generate_series(1, 100)',
    );
    const created = expectData<CreatedBackup>(await owner.api.post(`${databasePath}/backups`), 201);
    backupId = (await waitForBackup(owner.api, `${databasePath}/backups`, created.id)).id;
    // A write after the backup: a restore in place would take it away.
    await psql(connectionString, 'INSERT INTO entries DEFAULT VALUES');
    // A webhook endpoint for the routes that name one; no event it takes comes here.
    webhookId = expectData<Webhook>(
      await owner.api.post(`/projects/${project.id}/webhooks`, {
        url: 'https://hooks.example.com/bodies',
        events: ['drill.failed'],
      }),
      201,
    ).id;
    const doc = (await owner.api.get<OpenApiDocument>('/openapi.json')).body;
    routes = routesOf(doc).filter((route) => route.bodyType !== undefined);
  });

  /** The route's path with the owner's ids in it. */
  function ownersPath(route: FuzzRoute): string {
    return route.path.replace(/\{([^}]+)\}/g, (_, param: string) => {
      if (param === 'id' || param === 'project_id') return project.id;
      if (param === 'name') return 'ledger';
      if (param === 'backup_id') return backupId;
      if (param === 'webhook_id') return webhookId;
      throw new Error(`${route.method} ${route.path}: no fixture for {${param}}`);
    });
  }

  function send(api: ApiClient, route: FuzzRoute, body: string, type?: string) {
    // A Buffer goes without a Content-Type of fetch's own; a string would be text/plain.
    return api.request(route.method, ownersPath(route), {
      rawBody: Buffer.from(body),
      headers: type ? { 'content-type': type } : {},
    });
  }

  it('refuses them with 400 VALIDATION_ERROR on every route with a body, to everyone', async () => {
    const owners = await apiInventory(owner.api);
    const strangers = await apiInventory(stranger.api);
    const bodyRoutes = routes.map((route) => `${route.method} ${route.path}`);
    for (const expected of [
      'POST /projects',
      'POST /projects/{project_id}/databases',
      'POST /projects/{project_id}/databases/{name}/backups/{backup_id}/restore',
      'POST /projects/{project_id}/databases/{name}/pitr/restore',
    ])
      assert.ok(bodyRoutes.includes(expected), `${expected} is documented with a body`);
    const anonymous = await newClient();
    let sent = 0;
    for (const route of routes) {
      const callers = route.bearer ? [owner.api, stranger.api] : [anonymous];
      for (const api of callers) {
        for (const body of BAD_BODIES) {
          for (const type of CONTENT_TYPES) {
            const what = `${route.method} ${route.path} with ${body} as ${type ?? 'no type'}`;
            const error = expectError(await send(api, route, body, type), 400, 'VALIDATION_ERROR');
            assert.deepEqual(
              error.details?.map((detail) => detail.field),
              ['body'],
              what,
            );
            sent += 1;
          }
        }
      }
    }
    assert.ok(sent >= 200, `${sent} requests`);

    assert.deepEqual([...(await apiInventory(owner.api))], [...owners]);
    assert.deepEqual([...(await apiInventory(stranger.api))], [...strangers]);
    const { restores } = expectData<{ restores: unknown[] }>(
      await owner.api.get(`${databasePath}/restores`),
      200,
    );
    assert.deepEqual(restores, [], 'no restore was made');
    // PITR stays off, so its restores and restore points cannot have been made either.
    const pitr = expectData<{ enabled: boolean }>(
      await owner.api.get(`${databasePath}/pitr/config`),
      200,
    );
    assert.equal(pitr.enabled, false);
    assert.equal(await psql(connectionString, COUNT_SQL), '101', 'the write after the backup');
  });

  it('takes no bytes at all as no body where the body is optional', async () => {
    const restore = routes.find((route) => route.path.endsWith('/{backup_id}/restore'));
    assert.ok(restore);
    const dryRun = `${ownersPath(restore)}?dry_run=true`;
    // No body is a restore in place: its plan, with no name to check.
    const empty: Record<string, string>[] = [
      { 'content-type': 'application/json' },
      { 'content-type': 'text/plain', 'content-length': '0' },
    ];
    for (const headers of empty) {
      const { plan } = expectData<RestoreDryRun>(
        await owner.api.request('POST', dryRun, { headers }),
        200,
      );
      assert.equal(plan.base_backup_id, backupId);
    }
    // A body that names a target is read: the source's own name is taken.
    expectError(
      await owner.api.post(dryRun, { target_database: 'ledger' }),
      409,
      'DATABASE_NAME_TAKEN',
    );
  });

  it('refuses a nested object given as anything but an object, naming it', async () => {
    for (const config of [[], 'big', 5, [{ cpu: 1 }]]) {
      const error = expectError(
        await owner.api.post(`/projects/${project.id}/databases`, { name: 'sized', config }),
        400,
        'VALIDATION_ERROR',
      );
      assert.deepEqual(error.details, [{ field: 'config', message: 'config must be an object' }]);
    }
    expectError(
      await owner.api.get(`/projects/${project.id}/databases/sized`),
      404,
      'DATABASE_NOT_FOUND',
    );
  });
});
