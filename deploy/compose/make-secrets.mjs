#!/usr/bin/env node
// The secrets docker-compose.yml mounts, made once before the first `docker compose up`:
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
// - <app>-rabbitmq-url for each of the six apps: its own broker login, which
//   rabbitmq-definitions.json (../kubernetes/rabbitmq/definitions.json with each login's
//   password hash) creates when the broker starts;
// - postgres-password and database-url, the metadata database's;
// - minio-password, MinIO's, which backup-service and pitr-worker use as their S3 key;
// - encryption-key, which seals database passwords at rest (the provisioner's).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { APPS, brokerLogins, password } from '../kubernetes/rabbitmq/logins.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every secret file, by name, consistent with one another. */
export function composeSecrets() {
  const { definitions, urls } = brokerLogins('rabbitmq:5672');
  const postgresPassword = password();
  const files = {
    'rabbitmq-definitions.json': `${JSON.stringify(definitions, null, 2)}\n`,
    'postgres-password': postgresPassword,
    'database-url': `postgres://pgcloud:${postgresPassword}@postgres:5432/pgcloud`,
    'minio-password': password(),
    'encryption-key': randomBytes(32).toString('base64'),
  };
  for (const app of APPS) files[`${app}-rabbitmq-url`] = urls[app];
  return files;
}

/**
 * Writes the secrets missing from `dir`, and answers their names. Files that go together
 * (a password and what holds it) are written as a set from one run, or not at all.
 */
export function writeSecrets(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const files = composeSecrets();
  const sets = [
    ['postgres-password', 'database-url'],
    ['rabbitmq-definitions.json', ...APPS.map((app) => `${app}-rabbitmq-url`)],
    ['minio-password'],
    ['encryption-key'],
  ];
  const written = [];
  for (const set of sets) {
    const there = set.filter((name) => existsSync(join(dir, name)));
    if (there.length === set.length) continue;
    if (there.length > 0)
      throw new Error(
        `${dir} holds ${there.join(', ')} but not the rest of their set (${set.join(', ')}): ` +
          'restore the missing files, or delete the set and the volumes its servers keep',
      );
    // Readable inside the containers, whose users differ from yours; the folder keeps
    // them from the other users of this host.
    for (const name of set) writeFileSync(join(dir, name), files[name], { mode: 0o644 });
    written.push(...set);
  }
  return written;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = join(ROOT, '.secrets');
  const written = writeSecrets(dir);
  console.log(
    written.length > 0
      ? `wrote ${written.join(', ')} in .secrets/`
      : 'every secret is in .secrets/ already; nothing written',
  );
}
