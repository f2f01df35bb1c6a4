import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SERVICE_CALLS } from '@pgcloud/contracts';
import { eventsExchange } from '@pgcloud/messaging';
import type { Access, Definitions } from './broker-topology.js';
import {
  ALL_EVENTS,
  allows,
  brokerUses,
  mustNotReach,
  needs,
  readDefinitions,
} from './broker-topology.js';
import { KUBERNETES_DIR } from './manifests.js';

/** RMQ_QUEUE_PREFIX as the base's settings give it: the definitions' regexes name it. */
function queuePrefix(): string {
  const text = readFileSync(join(KUBERNETES_DIR, 'base', 'settings.env'), 'utf8');
  const prefix = /^RMQ_QUEUE_PREFIX=(.+)$/m.exec(text)?.[1];
  assert.ok(prefix, 'base/settings.env sets RMQ_QUEUE_PREFIX');
  return prefix.trim();
}

const VHOST = 'pgcloud';

function permissionsOf(definitions: Definitions, user: string) {
  const rows = definitions.permissions.filter((row) => row.user === user);
  assert.equal(rows.length, 1, `${user} has one row of permissions`);
  const [row] = rows;
  assert.ok(row);
  assert.equal(row.vhost, VHOST, `${user}'s permissions are on the vhost ${VHOST}`);
  return row;
}

function topicPermissionsOf(definitions: Definitions, user: string, exchange: string) {
  const rows = definitions.topic_permissions.filter((row) => row.user === user);
  assert.ok(rows.length <= 1, `${user} has at most one row of topic permissions`);
  const [row] = rows;
  if (row) {
    assert.equal(row.vhost, VHOST);
    assert.equal(row.exchange, exchange, `${user}'s topic permissions are on ${exchange}`);
  }
  return row;
}

type Patterns = { configure: string; write: string; read: string };

/** The accesses whose outcome is not `expected`, as `access resource` lines. */
function refusals(patterns: Patterns, accesses: Access[], expected: boolean): string[] {
  return accesses
    .filter(({ access, resource }) => allows(patterns[access], resource) !== expected)
    .map(({ access, resource }) => `${access} ${resource}`);
}

/**
 * The routing keys on the events exchange whose outcome is not `expected`. Publishing
 * needs write on the exchange, binding needs read on it, and then, when the user has
 * topic permissions there, a routing key its write or read pattern allows (a user without
 * any may use every routing key).
 */
function topicRefusals(
  patterns: Patterns,
  topic: { write: string; read: string } | undefined,
  exchange: string,
  keys: Access[],
  expected: boolean,
): string[] {
  return keys
    .filter(({ access, resource }) => {
      if (access === 'configure') throw new Error('topics have no configure access');
      const allowed =
        allows(patterns[access], exchange) && (!topic || allows(topic[access], resource));
      return allowed !== expected;
    })
    .map(({ access, resource }) => `${access} ${resource}`);
}

describe('the RabbitMQ definitions (deploy/kubernetes/rabbitmq/definitions.json)', () => {
  const definitions = readDefinitions();
  const prefix = queuePrefix();
  const uses = brokerUses();

  it('reads what each app does on the broker from its code', () => {
    // A guard on the reading itself: the topology README.md describes.
    const byApp = Object.fromEntries(uses.map((use) => [use.app, use]));
    assert.equal(byApp['api-gateway']?.serves, undefined);
    assert.equal(byApp['auth-service']?.serves, 'auth');
    assert.deepEqual(byApp['project-service']?.subscribes, [
      'database.created',
      'database.deleted',
    ]);
    assert.deepEqual(byApp['pitr-worker']?.publishes, [
      'archive.broken',
      'archive.healthy',
      'archive.stale',
    ]);
    assert.ok(byApp['database-provisioner']?.publishes.includes('restore.finished'));
    assert.ok(ALL_EVENTS.includes('backup.status-changed'));
    // Its listeners subscribe through a list of sources, read from where it is declared.
    assert.deepEqual(byApp['notification-service']?.publishes, []);
    assert.deepEqual(byApp['notification-service']?.subscribes, [
      'archive.broken',
      'archive.healthy',
      'archive.stale',
      'backup.status-changed',
      'database.credentials_rotated',
      'database.expired',
      'database.status-changed',
      'database.storage_fenced',
      'drill.failed',
      'drill.passed',
      'project.deleted',
      'restore.finished',
    ]);
  });

  it('has one user per app, named after it, without a password or tags', () => {
    assert.deepEqual(definitions.vhosts, [{ name: VHOST }]);
    const names = definitions.users.map((user) => user.name).sort();
    assert.deepEqual(names, Object.keys(SERVICE_CALLS).sort());
    for (const user of definitions.users) {
      // The committed file holds no secret: passwords are set where it is loaded.
      assert.equal(user.password_hash, '', `${user.name} has no password in the repository`);
      assert.equal(user.hashing_algorithm, 'rabbit_password_hashing_sha256');
      assert.deepEqual(user.tags, [], `${user.name} is no administrator or monitoring user`);
    }
    assert.deepEqual(
      definitions.permissions.map((row) => row.user).sort(),
      names,
      'every user has permissions and no one else has',
    );
  });

  it('declares the events exchange the code publishes to', () => {
    assert.deepEqual(
      definitions.exchanges.map(({ name, vhost, type, durable }) => ({
        name,
        vhost,
        type,
        durable,
      })),
      [{ name: eventsExchange(prefix), vhost: VHOST, type: 'topic', durable: true }],
    );
  });

  for (const use of uses) {
    describe(use.app, () => {
      it('may do everything its code does on the broker', () => {
        const permissions = permissionsOf(definitions, use.app);
        const topic = topicPermissionsOf(definitions, use.app, eventsExchange(prefix));
        const { resources, topics } = needs(use, prefix);
        const exchange = eventsExchange(prefix);
        assert.deepEqual(refusals(permissions, resources, true), [], 'refused resources');
        assert.deepEqual(
          topicRefusals(permissions, topic, exchange, topics, true),
          [],
          'refused routing keys',
        );
      });

      it("may not read, declare or bind another app's queues, nor publish its events", () => {
        const permissions = permissionsOf(definitions, use.app);
        const topic = topicPermissionsOf(definitions, use.app, eventsExchange(prefix));
        const { resources, topics } = mustNotReach(use, prefix);
        const exchange = eventsExchange(prefix);
        assert.ok(resources.length > 0 && topics.length > 0);
        assert.deepEqual(refusals(permissions, resources, false), [], 'allowed resources');
        assert.deepEqual(
          topicRefusals(permissions, topic, exchange, topics, false),
          [],
          'allowed routing keys',
        );
        if (allows(permissions.write, exchange) || allows(permissions.read, exchange))
          assert.ok(topic, `${use.app} uses the events exchange: its routing keys are limited`);
      });
    });
  }

  it("gives README.md's upgrade commands the file's own patterns", () => {
    // Continued lines joined: one command a line, its patterns in single quotes.
    const readme = readFileSync(join(KUBERNETES_DIR, 'README.md'), 'utf8').replace(/\\\n\s*/g, '');
    const commands = [
      ...readme.matchAll(
        /^rabbitmqctl (set_permissions|set_topic_permissions) -p (\S+) (\S+) (.*)$/gm,
      ),
    ];
    assert.deepEqual([...new Set(commands.map(([, command]) => command))].sort(), [
      'set_permissions',
      'set_topic_permissions',
    ]);
    for (const [line, command, vhost, user = '', args = ''] of commands) {
      const patterns = [...args.matchAll(/'([^']*)'/g)].map(([, pattern = '']) => pattern);
      assert.equal(vhost, VHOST, line);
      if (command === 'set_topic_permissions') {
        const row = topicPermissionsOf(definitions, user, eventsExchange(prefix));
        const exchange = args.split(' ')[0];
        assert.deepEqual([exchange, ...patterns], [row?.exchange, row?.write, row?.read], line);
      } else {
        const row = permissionsOf(definitions, user);
        assert.deepEqual(patterns, [row.configure, row.write, row.read], line);
      }
    }
  });

  it('catches a user allowed too much', () => {
    // The checks above must be able to fail: widen one user and they do.
    const wide = { configure: '.*', write: '.*', read: '.*' };
    const gateway = uses.find((use) => use.app === 'api-gateway');
    assert.ok(gateway);
    const { resources, topics } = mustNotReach(gateway, prefix);
    assert.ok(refusals(wide, resources, false).length > 0);
    const exchange = eventsExchange(prefix);
    assert.ok(topicRefusals(wide, undefined, exchange, topics, false).length > 0);
  });
});
