import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestMicroservice } from '@nestjs/common';
import type { DomainEvent, ErrorCode, ProjectEvent, RequestContext } from '@pgcloud/contracts';
import { DATABASE_EVENTS, DomainError, PROJECT_PATTERNS } from '@pgcloud/contracts';
import { EventPublisher, eventsExchange, startService } from '@pgcloud/messaging';
import amqp from 'amqplib';
import { Isolation } from '@pgcloud/devstack';
import { AppModule } from '../app.module.js';
import { loadConfig } from '../config.js';

const alice: RequestContext = {
  requestId: 'int-alice',
  userId: 'user_aaaaaaaaaaaaaaaaaaaa',
  tier: 'free',
};

async function errorCode(promise: Promise<unknown>): Promise<ErrorCode> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
  assert.fail('expected a DomainError');
}

describe('project-service over RabbitMQ and PostgreSQL', () => {
  const isolation = Isolation.create();
  const config = loadConfig({ ...process.env, ...isolation.envOf('project-service') });
  let service: INestMicroservice | undefined;
  // database-provisioner's side: the database events it publishes, sent here by hand.
  const provisioner = new EventPublisher(loadConfig(isolation.envOf('database-provisioner')));

  before(async () => {
    await isolation.brokerLogins();
    service = await startService(AppModule.forRoot(config), 'projects', config);
  });

  after(async () => {
    await service?.close();
    await provisioner.onApplicationShutdown();
    await isolation.cleanup();
  });

  it('stores a project and lists it for its owner only', async () => {
    const client = isolation.client('projects');
    const created = await client.call(PROJECT_PATTERNS.create, alice, { name: 'stored' });
    const rows = await isolation.sql<{ owner_id: string; name: string }>(
      'SELECT owner_id, name FROM projects.projects WHERE id = $1',
      [created.id],
    );
    assert.deepEqual(rows, [{ owner_id: alice.userId, name: 'stored' }]);
    const later = await client.call(PROJECT_PATTERNS.create, alice, { name: 'stored-later' });
    const mine = await client.call(PROJECT_PATTERNS.list, alice, {});
    // The list answers each project as create did, oldest first.
    const ours = mine.projects.filter((p) => p.id === created.id || p.id === later.id);
    assert.deepEqual(ours, [created, later]);
    const bob = { ...alice, userId: 'user_bbbbbbbbbbbbbbbbbbbb' };
    assert.deepEqual(await client.call(PROJECT_PATTERNS.list, bob, {}), { projects: [] });
  });

  it('publishes project.created and project.deleted on the events exchange', async () => {
    const connection = await amqp.connect(isolation.env['RABBITMQ_URL'] ?? '');
    try {
      const channel = await connection.createChannel();
      const exchange = eventsExchange(isolation.env['RMQ_QUEUE_PREFIX'] ?? '');
      await channel.assertExchange(exchange, 'topic', { durable: true });
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(queue, exchange, 'project.*');

      const client = isolation.client('projects');
      const project = await client.call(PROJECT_PATTERNS.create, alice, {
        name: 'announced',
      });
      await client.call(PROJECT_PATTERNS.delete, alice, { id: project.id });

      const received: DomainEvent<ProjectEvent>[] = [];
      for (let i = 0; i < 50 && received.length < 2; i++) {
        const message = await channel.get(queue, { noAck: false });
        if (message) {
          received.push(JSON.parse(message.content.toString()) as DomainEvent<ProjectEvent>);
          channel.ack(message);
        } else {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      assert.deepEqual(
        received.map((e) => [e.event, e.payload, e.request_id]),
        [
          ['project.created', { project_id: project.id, owner_id: alice.userId }, alice.requestId],
          ['project.deleted', { project_id: project.id, owner_id: alice.userId }, alice.requestId],
        ],
      );
    } finally {
      await connection.close();
    }
  });

  it("counts databases from the provisioner's events, refuses to delete a project that has some, and deletes it with force", async () => {
    const client = isolation.client('projects');
    const project = await client.call(PROJECT_PATTERNS.create, alice, {
      name: 'with-dbs',
    });
    const count = async () =>
      (
        await client.call(PROJECT_PATTERNS.get, alice, {
          id: project.id,
        })
      ).database_count;
    const announce = (name: 'created' | 'deleted', eventId: string, databaseId: string) =>
      provisioner.publishMessage(
        {
          event: DATABASE_EVENTS[name].name,
          payload: { database_id: databaseId, project_id: project.id },
          request_id: alice.requestId,
          at: new Date().toISOString(),
        },
        eventId,
      );
    const waitForCount = async (expected: number) => {
      for (let i = 0; i < 100 && (await count()) !== expected; i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await count(), expected);
    };
    await announce('created', 'evt-created-1', 'db_one');
    await announce('created', 'evt-created-2', 'db_two');
    await announce('created', 'evt-created-2', 'db_two'); // delivered twice: counted once
    await waitForCount(2);
    assert.equal(
      await errorCode(client.call(PROJECT_PATTERNS.delete, alice, { id: project.id })),
      'PROJECT_NOT_EMPTY',
    );
    // A delete handled before its create (another order on the way) still wins.
    await announce('deleted', 'evt-deleted-3', 'db_three');
    await announce('created', 'evt-created-3', 'db_three');
    await announce('deleted', 'evt-deleted-1', 'db_one');
    await waitForCount(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await count(), 1);
    await client.call(PROJECT_PATTERNS.delete, alice, { id: project.id, force: true });
    assert.equal(
      await errorCode(client.call(PROJECT_PATTERNS.get, alice, { id: project.id })),
      'PROJECT_NOT_FOUND',
    );
  });

  it('validates messages itself, whatever the gateway did', async () => {
    const client = isolation.client('projects');
    assert.equal(
      await errorCode(client.call(PROJECT_PATTERNS.create, alice, { name: 'Bad Name' })),
      'VALIDATION_ERROR',
    );
    assert.equal(
      await errorCode(
        isolation
          .rawClient('projects')
          .send(PROJECT_PATTERNS.create.pattern, alice, { name: 'fine', extra: 1 }),
      ),
      'VALIDATION_ERROR',
    );
    assert.equal(
      await errorCode(
        client.call(PROJECT_PATTERNS.create, { requestId: 'anon' }, { name: 'no-owner' }),
      ),
      'AUTH_REQUIRED',
    );
  });

  it('lets exactly one of concurrent creates of one name win', async () => {
    const client = isolation.client('projects');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, () =>
        client.call(PROJECT_PATTERNS.create, alice, { name: 'contested' }),
      ),
    );
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected')
        assert.equal((outcome.reason as DomainError).code, 'PROJECT_NAME_TAKEN');
    }
  });

  it('lets concurrent creates of one account pass the project quota no further than its limit', async () => {
    const client = isolation.client('projects');
    const carol: RequestContext = { ...alice, userId: 'user_cccccccccccccccccccc' };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        client.call(PROJECT_PATTERNS.create, carol, { name: `parallel-${i}` }),
      ),
    );
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 5);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected')
        assert.equal((outcome.reason as DomainError).code, 'QUOTA_EXCEEDED');
    }
    const rows = await isolation.sql('SELECT 1 FROM projects.projects WHERE owner_id = $1', [
      carol.userId,
    ]);
    assert.equal(rows.length, 5, 'the refused creates wrote nothing');
    // At the limit, quota (403) is checked before a duplicate name (409).
    assert.equal(
      await errorCode(client.call(PROJECT_PATTERNS.create, carol, { name: 'parallel-0' })),
      'QUOTA_EXCEEDED',
    );
    const proCarol: RequestContext = { ...carol, tier: 'pro' };
    await client.call(PROJECT_PATTERNS.create, proCarol, { name: 'sixth' });
  });

  it('never runs later a request nobody waits for any more', async () => {
    await service?.close();
    service = undefined;
    const client = isolation.client('projects', 300);
    const startedAt = Date.now();
    assert.equal(
      await errorCode(client.call(PROJECT_PATTERNS.create, alice, { name: 'too-late' })),
      'SERVICE_UNAVAILABLE',
    );
    assert.ok(Date.now() - startedAt < 3000, 'the caller is answered within its timeout');
    await new Promise((resolve) => setTimeout(resolve, 400));

    service = await startService(AppModule.forRoot(config), 'projects', config);
    const { projects } = await isolation.client('projects').call(PROJECT_PATTERNS.list, alice, {});
    assert.equal(
      projects.find((p) => p.name === 'too-late'),
      undefined,
      'the expired request was dropped by the broker',
    );
  });
});
