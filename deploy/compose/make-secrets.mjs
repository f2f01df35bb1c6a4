#!/usr/bin/env node
// The secrets docker-compose.yml mounts, made before the first `docker compose up`, and
// again after an upgrade that adds an app:
//
//   node deploy/compose/make-secrets.mjs
//
// Each is a file of .secrets/ beside docker-compose.yml (a folder only its owner reads;
// nothing in it is committed), given by Compose to the containers that need it under
// /run/secrets/, where the apps read it through their *_FILE settings: no password is in
// any container's environment. A file already there is kept, since the servers keep the
// first password they were given; delete .secrets/ and the volumes to start over.
//
// What it makes:
// - <app>-rabbitmq-url for each of the seven apps: its own broker login, which
//   rabbitmq-definitions.json (../kubernetes/rabbitmq/definitions.json with each login's
//   password hash) creates when the broker starts. The definitions are written again
//   whenever they lack a login or differ from the repository's (a release that adds an
//   app or changes a permission), with the passwords of the URLs already there;
// - postgres-password and database-url, the metadata database's;
// - minio-password, MinIO's, which backup-service and pitr-worker use as their S3 key;
// - encryption-key, which seals database passwords at rest (the provisioner's);
// - notification-service-encryption-key, which seals webhook signing secrets at rest.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { APPS, brokerLogins, password } from '../kubernetes/rabbitmq/logins.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEFINITIONS = 'rabbitmq-definitions.json';

const urlFile = (app) => `${app}-rabbitmq-url`;
const key = () => randomBytes(32).toString('base64');

/**
 * Every secret file, by name, consistent with one another. `brokerPasswords`: the broker
 * password of each app whose login is kept; the others get fresh ones.
 */
export function composeSecrets(brokerPasswords = {}) {
  const { definitions, urls } = brokerLogins('rabbitmq:5672', brokerPasswords);
  const postgresPassword = password();
  const files = {
    [DEFINITIONS]: `${JSON.stringify(definitions, null, 2)}\n`,
    'postgres-password': postgresPassword,
    'database-url': `postgres://pgcloud:${postgresPassword}@postgres:5432/pgcloud`,
    'minio-password': password(),
    'encryption-key': key(),
    'notification-service-encryption-key': key(),
  };
  for (const app of APPS) files[urlFile(app)] = urls[app];
  return files;
}

/** The broker password of each app whose URL file is in `dir`. */
function keptBrokerPasswords(dir) {
  const kept = {};
  for (const app of APPS) {
    const file = join(dir, urlFile(app));
    if (existsSync(file))
      kept[app] = decodeURIComponent(new URL(readFileSync(file, 'utf8')).password);
  }
  return kept;
}

/** The definitions without their password hashes, as JSON: what a release changes. */
function withoutHashes(text) {
  const definitions = JSON.parse(text);
  for (const user of definitions.users) user.password_hash = '';
  return JSON.stringify(definitions);
}

/**
 * Writes the secrets missing from `dir`, and answers their names. Files that go together
 * (a password and what holds it) are written as a set from one run, or not at all. The
 * broker's logins are the exception: the URL files hold the passwords, so a missing one is
 * added, and the definitions are written again from them when they are out of date.
 */
export function writeSecrets(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const files = composeSecrets(keptBrokerPasswords(dir));
  const sets = [
    ['postgres-password', 'database-url'],
    ['minio-password'],
    ['encryption-key'],
    ['notification-service-encryption-key'],
    ...APPS.map((app) => [urlFile(app)]),
  ];
  const written = [];
  // Readable inside the containers, whose users differ from yours; the folder keeps them
  // from the other users of this host.
  const write = (name) => {
    writeFileSync(join(dir, name), files[name], { mode: 0o644 });
    written.push(name);
  };
  for (const set of sets) {
    const there = set.filter((name) => existsSync(join(dir, name)));
    if (there.length === set.length) continue;
    if (there.length > 0)
      throw new Error(
        `${dir} holds ${there.join(', ')} but not the rest of their set (${set.join(', ')}): ` +
          'restore the missing files, or delete the set and the volumes its servers keep',
      );
    set.forEach(write);
  }
  const definitions = join(dir, DEFINITIONS);
  const loginAdded = written.some((name) => name.endsWith('-rabbitmq-url'));
  if (
    loginAdded ||
    !existsSync(definitions) ||
    withoutHashes(readFileSync(definitions, 'utf8')) !== withoutHashes(files[DEFINITIONS])
  )
    write(DEFINITIONS);
  return written;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = join(ROOT, '.secrets');
  const upgrade = existsSync(join(dir, DEFINITIONS));
  const written = writeSecrets(dir);
  console.log(
    written.length > 0
      ? `wrote ${written.join(', ')} in .secrets/`
      : 'every secret is in .secrets/ already; nothing written',
  );
  if (upgrade && written.includes(DEFINITIONS))
    console.log('RabbitMQ loads the new logins when it starts: docker compose restart rabbitmq');
}
