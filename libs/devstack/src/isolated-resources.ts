import { randomBytes, randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceName } from '@pgcloud/contracts';
import { SERVICE_QUEUES } from '@pgcloud/contracts';
import { eventsExchange, eventsQueueName, queueName } from '@pgcloud/messaging';
import amqp from 'amqplib';
import pg from 'pg';
import type { LauncherEnv } from './launcher-env.js';
import { removeRunBucket } from './run-s3.js';

// What a test run owns on the shared servers (a metadata database, queues, a bucket, a data
// folder and a port range), named after its run id so nothing else is ever touched.

/** A new id for a stack or a test's resources: a timestamp and random hex. */
export function newRunId(): string {
  return `${new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

/**
 * Settings that give a run its own metadata database (made by the services at start)
 * and its own queues; dropIsolatedResources removes both.
 */
export function isolatedEnv(
  launcher: LauncherEnv,
  id: string = newRunId(),
): Record<string, string> {
  const database = new URL(launcher.DATABASE_URL);
  database.pathname = `/pgcloud_test_${id.replace(/-/g, '_')}`;
  // Database servers of their own, in a short path PostgreSQL's user can reach wherever
  // the checkout is (socket paths are limited to 107 bytes), on ports of their own.
  const portBase = 21000 + 100 * randomInt(0, 80);
  return {
    DATABASE_URL: database.toString(),
    RMQ_QUEUE_PREFIX: `pgcloud-test-${id}`,
    RABBITMQ_URL: launcher.RABBITMQ_URL,
    DATA_DIR: join(tmpdir(), `pgcloud-${id}`),
    DATABASE_PORT_RANGE: `${portBase}-${portBase + 99}`,
    S3_BUCKET: `pgcloud-test-${id}`,
  };
}

/** Drops the database and queues of an isolated run (nothing else: names are checked). */
export async function dropIsolatedResources(env: Record<string, string>): Promise<void> {
  await removeRunBucket({ ...process.env, ...env });
  const databaseUrl = new URL(env['DATABASE_URL'] ?? '');
  const database = decodeURIComponent(databaseUrl.pathname.slice(1));
  if (database.startsWith('pgcloud_test_')) {
    databaseUrl.pathname = '/postgres';
    const client = new pg.Client({ connectionString: databaseUrl.toString() });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }
  const prefix = env['RMQ_QUEUE_PREFIX'] ?? '';
  if (!prefix.startsWith('pgcloud-test-')) return;
  const connection = await amqp.connect(env['RABBITMQ_URL'] ?? '');
  try {
    const channel = await connection.createChannel();
    for (const service of Object.keys(SERVICE_QUEUES) as ServiceName[]) {
      await channel.deleteQueue(queueName(prefix, service));
      await channel.deleteQueue(eventsQueueName(prefix, service));
    }
    await channel.deleteExchange(eventsExchange(prefix));
    await channel.close();
  } finally {
    await connection.close();
  }
}
