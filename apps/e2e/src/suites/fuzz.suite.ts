import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SignedIn } from '@pgcloud/testing';
import type { Stack } from '@pgcloud/devstack';
import { expectData } from '../support/assertions.js';
import { fuzzUser, userFixtures } from '../support/fuzz/fixtures.js';
import { apiInventory, metadataInventory } from '../support/fuzz/inventory.js';
import { planFuzz } from '../support/fuzz/plan.js';
import { fuzzSeed, Prng } from '../support/fuzz/prng.js';
import type { OpenApiDocument } from '../support/fuzz/routes.js';
import { routesOf } from '../support/fuzz/routes.js';
import type { FuzzOutcome } from '../support/fuzz/run.js';
import { runPlan } from '../support/fuzz/run.js';
import type { UserFixtures } from '../support/fuzz/send.js';
import { newClient, sharedStack } from '../support/shared-stack.js';

/** Requests per route and caller: with the documented routes, well over a thousand. */
const PER_ROUTE = 12;
const MIN_REQUESTS = 1000;

/**
 * Bad requests to every route of /openapi.json from a Free user, a Pro user and callers
 * without a valid token, generated from a seeded PRNG (FUZZ_SEED replays a run). Every
 * answer must be a 4xx error envelope whose code and status are docs/api/errors.md's (or a
 * success, recorded), and nothing may exist afterwards that a success did not create.
 */
describe('fuzz: bad requests to every documented route', () => {
  let stack: Stack;
  const signedIn = {} as Record<'free' | 'pro', SignedIn>;
  const users = {} as Record<'free' | 'pro', UserFixtures>;
  const before_ = {} as Record<'free' | 'pro', Set<string>>;
  let outcome: FuzzOutcome;

  before(async () => {
    stack = await sharedStack();
    [signedIn.free, signedIn.pro] = await Promise.all([
      fuzzUser(stack, 'free'),
      fuzzUser(stack, 'pro'),
    ]);
    [users.free, users.pro] = await Promise.all([
      userFixtures(signedIn.free, 'free'),
      userFixtures(signedIn.pro, 'pro'),
    ]);
    before_.free = await apiInventory(signedIn.free.api);
    before_.pro = await apiInventory(signedIn.pro.api);
  });

  after(async () => {
    // The fixtures' servers would otherwise run on for the suites after this one.
    for (const tier of ['free', 'pro'] as const) {
      const user = signedIn[tier];
      if (!user) continue;
      const { projects } = expectData<{ projects: { id: string }[] }>(
        await user.api.get('/projects'),
        200,
      );
      for (const project of projects) await user.api.delete(`/projects/${project.id}?force=true`);
    }
  });

  it('answers every bad request with a 4xx envelope of the table, never a 5xx', async () => {
    const seed = fuzzSeed();
    console.log(`fuzz: seed ${seed} (FUZZ_SEED=${seed} replays this run)`);
    const api = await newClient();
    const doc = (await api.get<OpenApiDocument>('/openapi.json')).body;
    const routes = routesOf(doc);
    const plan = planFuzz(new Prng(seed), routes, PER_ROUTE);
    const startedAt = Date.now();
    outcome = await runPlan(stack.baseUrl, plan, users);
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    const statuses = [...outcome.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`);
    console.log(
      `fuzz: ${outcome.requests} requests to ${routes.length} routes in ${seconds} s; ` +
        `5xx: ${outcome.serverErrors}; statuses ${statuses.join(', ')}`,
    );
    assert.ok(outcome.requests >= MIN_REQUESTS, `${outcome.requests} requests`);
    assert.equal(outcome.serverErrors, 0, outcome.failures.join('\n'));
    assert.deepEqual(outcome.failures, [], `seed ${seed}`);
  });

  it('leaves nothing that a successful request did not create', async () => {
    assert.ok(outcome, 'the fuzz ran');
    const leftovers: string[] = [];
    for (const tier of ['free', 'pro'] as const) {
      leftovers.push(
        ...(await leftoversOf(
          tier,
          outcome.changes.filter((c) => c.caller === tier),
        )),
      );
    }
    const rows = await metadataInventory(stack.env['DATABASE_URL'] ?? '', [
      users.free.userId,
      users.pro.userId,
    ]);
    const created = new Set(outcome.changes.map(({ change }) => change.key));
    for (const row of rows) {
      const settled = ['active', 'running', 'completed', 'failed'].includes(row.status);
      if (!settled && !created.has(row.key))
        leftovers.push(`metadata: ${row.key} is ${row.status}`);
    }
    for (const tier of ['free', 'pro'] as const) {
      const { projectId, databaseName } = users[tier];
      const config = expectData<{ enabled: boolean }>(
        await signedIn[tier].api.get(
          `/projects/${projectId}/databases/${databaseName}/pitr/config`,
        ),
        200,
      );
      if (config.enabled) leftovers.push(`${tier}: PITR got enabled`);
    }
    const made = new Map<string, number>();
    for (const { caller, change } of outcome.changes) {
      const what = `${caller} ${change.action} ${change.kind}`;
      made.set(what, (made.get(what) ?? 0) + 1);
    }
    const summary = [...made].map(([what, count]) => `${what}: ${count}`).join(', ') || 'none';
    console.log(`fuzz: successful changes: ${summary}; leftovers: ${leftovers.length}`);
    assert.deepEqual(leftovers, []);
  });

  async function leftoversOf(
    tier: 'free' | 'pro',
    changes: FuzzOutcome['changes'],
  ): Promise<string[]> {
    const now = await apiInventory(signedIn[tier].api);
    const created = new Set(
      changes.filter((c) => c.change.action === 'created').map((c) => c.change.key),
    );
    const deleted = new Set(
      changes.filter((c) => c.change.action === 'deleted').map((c) => c.change.key),
    );
    const problems: string[] = [];
    for (const key of now) {
      if (!before_[tier].has(key) && !created.has(key)) problems.push(`${tier}: ${key} appeared`);
    }
    for (const key of before_[tier]) {
      if (!now.has(key) && !deleted.has(key)) problems.push(`${tier}: ${key} disappeared`);
    }
    return problems;
  }
});
