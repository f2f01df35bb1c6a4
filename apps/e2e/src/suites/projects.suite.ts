import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Project, ProjectDetail, Region } from '@pgcloud/contracts';
import type { SignedIn } from '@pgcloud/testing';
import { signIn } from '@pgcloud/testing';
import { expectData, expectError } from '../support/assertions.js';
import { newClient, sharedStack, uniqueLogin } from '../support/shared-stack.js';

describe('projects', () => {
  let owner: SignedIn;
  let stranger: SignedIn;

  before(async () => {
    owner = await signIn(await newClient(), uniqueLogin('owner'));
    stranger = await signIn(await newClient(), uniqueLogin('stranger'));
  });

  it('creates, lists, shows and deletes a project', async () => {
    const created = expectData<Project>(
      await owner.api.post('/projects', { name: 'shop-backend' }),
      201,
    );
    assert.match(created.id, /^proj_[0-9a-z]{20}$/);
    assert.equal(created.name, 'shop-backend');
    assert.equal(created.default_region, 'local');
    assert.ok(Math.abs(Date.parse(created.created_at) - Date.now()) < 60_000);

    const { projects } = expectData<{ projects: Project[] }>(await owner.api.get('/projects'), 200);
    assert.deepEqual(
      projects.find((p) => p.id === created.id),
      created,
    );

    const shown = expectData<ProjectDetail>(await owner.api.get(`/projects/${created.id}`), 200);
    assert.deepEqual(shown, { ...created, database_count: 0 });

    assert.deepEqual(expectData(await owner.api.delete(`/projects/${created.id}`), 200), {
      id: created.id,
      deleted: true,
    });
    expectError(await owner.api.get(`/projects/${created.id}`), 404, 'PROJECT_NOT_FOUND');
    const after = expectData<{ projects: Project[] }>(await owner.api.get('/projects'), 200);
    assert.equal(
      after.projects.find((p) => p.id === created.id),
      undefined,
    );
  });

  const names: [string, string, boolean][] = [
    ['2 characters', 'ab', false],
    ['3 characters', 'abc', true],
    ['50 characters', `a${'b'.repeat(49)}`, true],
    ['51 characters', `a${'b'.repeat(50)}`, false],
    ['uppercase', 'MyApp', false],
    ['a leading digit', '1app', false],
    ['a leading hyphen', '-app', false],
    ['an underscore', 'my_app', false],
    ['a space', 'my app', false],
    ['a dot', 'my.app', false],
    ['digits and hyphens', 'app-2-go', true],
  ];
  for (const [what, name, valid] of names) {
    it(`${valid ? 'accepts' : 'refuses'} a name with ${what}`, async () => {
      const response = await owner.api.post('/projects', { name });
      if (valid) {
        const project = expectData<Project>(response, 201);
        assert.equal(project.name, name);
        // Deleted again, so the owner stays within the project quota.
        expectData(await owner.api.delete(`/projects/${project.id}`), 200);
      } else {
        const error = expectError(response, 400, 'VALIDATION_ERROR');
        assert.ok(
          error.details?.some((d) => d.field === 'name'),
          JSON.stringify(error.details),
        );
      }
    });
  }

  it('refuses a duplicate name in one account, not across accounts', async () => {
    expectData(await owner.api.post('/projects', { name: 'twin' }), 201);
    expectError(await owner.api.post('/projects', { name: 'twin' }), 409, 'PROJECT_NAME_TAKEN');
    expectData(await stranger.api.post('/projects', { name: 'twin' }), 201);
  });

  it("hides another account's project: 404 on GET and DELETE, and it stays", async () => {
    const mine = expectData<Project>(
      await owner.api.post('/projects', { name: 'private-one' }),
      201,
    );
    expectError(await stranger.api.get(`/projects/${mine.id}`), 404, 'PROJECT_NOT_FOUND');
    expectError(await stranger.api.delete(`/projects/${mine.id}`), 404, 'PROJECT_NOT_FOUND');
    const { projects } = expectData<{ projects: Project[] }>(
      await stranger.api.get('/projects'),
      200,
    );
    assert.equal(
      projects.find((p) => p.id === mine.id),
      undefined,
    );
    expectData(await owner.api.get(`/projects/${mine.id}`), 200);
  });

  it('answers PROJECT_NOT_FOUND for malformed and unknown ids', async () => {
    for (const id of [
      'nope',
      'proj_short',
      'PROJ_k3v9x0q2m8t4b7w1c5zd',
      'proj_k3v9x0q2m8t4b7w1c5zd',
      "proj_'%20OR%201=1",
    ]) {
      expectError(await owner.api.get(`/projects/${id}`), 404, 'PROJECT_NOT_FOUND');
      expectError(await owner.api.delete(`/projects/${id}`), 404, 'PROJECT_NOT_FOUND');
    }
  });

  it('takes default_region when it is a listed region, and refuses others', async () => {
    const { regions } = expectData<{ regions: Region[] }>(await owner.api.get('/regions'), 200);
    assert.deepEqual(regions, [{ id: 'local', name: 'This host' }]);
    const explicit = expectData<Project>(
      await owner.api.post('/projects', { name: 'with-region', default_region: 'local' }),
      201,
    );
    assert.equal(explicit.default_region, 'local');
    const error = expectError(
      await owner.api.post('/projects', { name: 'far-away', default_region: 'mars-1' }),
      400,
      'VALIDATION_ERROR',
    );
    assert.deepEqual(
      error.details?.map((d) => d.field),
      ['default_region'],
    );
  });

  it('validates bodies with field details', async () => {
    const missing = expectError(await owner.api.post('/projects', {}), 400, 'VALIDATION_ERROR');
    assert.ok(missing.details?.some((d) => d.field === 'name'));
    const extra = expectError(
      await owner.api.post('/projects', { name: 'fine-name', owner_id: 'user_x' }),
      400,
      'VALIDATION_ERROR',
    );
    assert.deepEqual(
      extra.details?.map((d) => d.field),
      ['owner_id'],
    );
    const wrongType = expectError(
      await owner.api.post('/projects', { name: 42 }),
      400,
      'VALIDATION_ERROR',
    );
    assert.ok(wrongType.details?.every((d) => d.field === 'name'));
    const badForce = expectError(
      await owner.api.delete('/projects/proj_k3v9x0q2m8t4b7w1c5zd?force=maybe'),
      400,
      'VALIDATION_ERROR',
    );
    assert.deepEqual(
      badForce.details?.map((d) => d.field),
      ['force'],
    );
  });

  it('allows five Free projects: the sixth is 403 and creates nothing; Pro may have a sixth', async () => {
    const login = uniqueLogin('collector');
    const free = await signIn(await newClient(), login);
    for (let i = 1; i <= 5; i++)
      expectData(await free.api.post('/projects', { name: `kept-${i}` }), 201);
    const error = expectError(
      await free.api.post('/projects', { name: 'one-more' }),
      403,
      'QUOTA_EXCEEDED',
    );
    assert.match(error.message, /5 projects/);
    // Quota (403) is checked before a duplicate name (409), validation (400) before both.
    expectError(await free.api.post('/projects', { name: 'kept-1' }), 403, 'QUOTA_EXCEEDED');
    expectError(await free.api.post('/projects', { name: 'X' }), 400, 'VALIDATION_ERROR');
    const listed = expectData<{ projects: Project[] }>(await free.api.get('/projects'), 200);
    assert.deepEqual(
      listed.projects.map((p) => p.name),
      ['kept-1', 'kept-2', 'kept-3', 'kept-4', 'kept-5'],
    );

    // Deleting one makes room for one.
    const first = listed.projects[0];
    assert.ok(first);
    expectData(await free.api.delete(`/projects/${first.id}`), 200);
    expectData(await free.api.post('/projects', { name: 'one-more' }), 201);
    expectError(await free.api.post('/projects', { name: 'too-many' }), 403, 'QUOTA_EXCEEDED');

    const stack = await sharedStack();
    assert.match(
      await stack.runAdmin('auth-service', ['set-tier', login, 'pro']),
      /is now on the pro tier/,
    );
    const pro = await signIn(await newClient(), login);
    expectData(await pro.api.post('/projects', { name: 'sixth' }), 201);
    const { projects } = expectData<{ projects: Project[] }>(await pro.api.get('/projects'), 200);
    assert.equal(projects.length, 6);
  });

  it('deletes with ?force=true too', async () => {
    const project = expectData<Project>(await owner.api.post('/projects', { name: 'forced' }), 201);
    assert.deepEqual(
      expectData(await owner.api.delete(`/projects/${project.id}?force=true`), 200),
      { id: project.id, deleted: true },
    );
  });
});
