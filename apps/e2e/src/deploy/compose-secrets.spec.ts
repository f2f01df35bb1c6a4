import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { APP_NAMES } from '@pgcloud/contracts';
import { parse } from 'yaml';
import type { Definitions } from './broker-topology.js';
import { readDefinitions } from './broker-topology.js';
import { ROOT } from './manifests.js';

interface ComposeService {
  environment?: Record<string, string>;
  secrets?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  secrets: Record<string, { file: string }>;
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;
const { writeSecrets } = (await import(
  pathToFileURL(join(ROOT, 'deploy', 'compose', 'make-secrets.mjs')).href
)) as { writeSecrets: (dir: string) => string[] };

/** Whether `hash` is RabbitMQ's rabbit_password_hashing_sha256 of `password`. */
function rabbitHashMatches(hash: string, password: string): boolean {
  const bytes = Buffer.from(hash, 'base64');
  const digest = createHash('sha256').update(bytes.subarray(0, 4)).update(password).digest();
  return bytes.length === 36 && digest.equals(bytes.subarray(4));
}

describe('docker-compose.yml and deploy/compose/make-secrets.mjs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgcloud-compose-secrets-'));
  const secrets = join(dir, '.secrets');
  const written = writeSecrets(secrets);
  const file = (name: string): string => readFileSync(join(secrets, name), 'utf8');

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every secret the file mounts, in a folder only its owner reads', () => {
    const named = Object.values(compose.secrets).map((s) => s.file.replace('./.secrets/', ''));
    assert.deepEqual(named.sort(), readdirSync(secrets).sort());
    assert.deepEqual(written.sort(), named.sort());
    assert.equal(statSync(secrets).mode & 0o777, 0o700);
  });

  it('gives passwords to containers as files only, each its own', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        assert.doesNotMatch(`${key}=${value}`, /PASSWORD=|:\/\/[^/@]+:[^/@]+@|_KEY=/, name);
        if (!key.endsWith('_FILE')) continue;
        const secret = /^\/run\/secrets\/(.+)$/.exec(value)?.[1];
        assert.ok(secret && service.secrets?.includes(secret), `${name} mounts ${value}`);
      }
      const urls = (service.secrets ?? []).filter((s) => s.endsWith('-rabbitmq-url'));
      if ((APP_NAMES as readonly string[]).includes(name))
        assert.deepEqual(urls, [`${name}-rabbitmq-url`], `${name} holds its own login only`);
      else assert.deepEqual(urls, [], name);
    }
  });

  it("logs each app in to the broker as itself, with a password the broker's definitions hold", () => {
    const loaded = JSON.parse(file('rabbitmq-definitions.json')) as Definitions;
    const withoutHashes = {
      ...loaded,
      users: loaded.users.map((user) => ({ ...user, password_hash: '' })),
    };
    assert.deepEqual(withoutHashes, readDefinitions());
    for (const app of APP_NAMES) {
      const url = new URL(file(`${app}-rabbitmq-url`));
      assert.equal(`${url.protocol}//${url.host}${url.pathname}`, 'amqp://rabbitmq:5672/pgcloud');
      assert.equal(url.username, app);
      const hash = loaded.users.find((user) => user.name === app)?.password_hash ?? '';
      assert.ok(rabbitHashMatches(hash, url.password), `${app}'s password`);
    }
  });

  it('gives the apps the servers’ own passwords', () => {
    const database = new URL(file('database-url'));
    assert.equal(database.password, file('postgres-password'));
    assert.equal(Buffer.from(file('encryption-key'), 'base64').length, 32);
    // notification-service seals its endpoints' secrets with a key of its own.
    const webhooksKey = file('notification-service-encryption-key');
    assert.equal(Buffer.from(webhooksKey, 'base64').length, 32);
    assert.notEqual(webhooksKey, file('encryption-key'));
    assert.ok(file('minio-password').length >= 32);
  });

  it("adds a new app's login on an upgrade, keeping every other password", () => {
    const older = join(dir, 'older');
    writeSecrets(older);
    const read = (name: string): string => readFileSync(join(older, name), 'utf8');
    // The secrets of a release before notification-service: no login for it, and its
    // user and permissions missing from the broker's definitions.
    rmSync(join(older, 'notification-service-rabbitmq-url'));
    rmSync(join(older, 'notification-service-encryption-key'));
    const previous = JSON.parse(read('rabbitmq-definitions.json')) as Definitions;
    const withoutIt = <T extends object>(rows: T[]): T[] =>
      rows.filter((row) => !Object.values(row).includes('notification-service'));
    previous.users = withoutIt(previous.users);
    previous.permissions = withoutIt(previous.permissions);
    previous.topic_permissions = withoutIt(previous.topic_permissions);
    writeFileSync(join(older, 'rabbitmq-definitions.json'), JSON.stringify(previous));
    const urls = Object.fromEntries(
      APP_NAMES.filter((app) => app !== 'notification-service').map((app) => [
        app,
        read(`${app}-rabbitmq-url`),
      ]),
    );

    assert.deepEqual(writeSecrets(older).sort(), [
      'notification-service-encryption-key',
      'notification-service-rabbitmq-url',
      'rabbitmq-definitions.json',
    ]);
    for (const [app, url] of Object.entries(urls))
      assert.equal(read(`${app}-rabbitmq-url`), url, `${app} keeps its login`);
    const loaded = JSON.parse(read('rabbitmq-definitions.json')) as Definitions;
    assert.deepEqual(
      { ...loaded, users: loaded.users.map((user) => ({ ...user, password_hash: '' })) },
      readDefinitions(),
    );
    for (const app of APP_NAMES) {
      const hash = loaded.users.find((user) => user.name === app)?.password_hash ?? '';
      const password = new URL(read(`${app}-rabbitmq-url`)).password;
      assert.ok(rabbitHashMatches(hash, password), `the broker knows ${app}'s password`);
    }
    assert.deepEqual(writeSecrets(older), [], 'nothing more to write');
  });

  it('keeps the secrets already there, and refuses to complete half a set', () => {
    const before = file('postgres-password');
    assert.deepEqual(writeSecrets(secrets), []);
    assert.equal(file('postgres-password'), before);
    rmSync(join(secrets, 'database-url'));
    assert.throws(() => writeSecrets(secrets), /holds postgres-password but not the rest/);
    assert.equal(file('postgres-password'), before);
  });
});
