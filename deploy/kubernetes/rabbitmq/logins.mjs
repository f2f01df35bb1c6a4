// Each app's broker login, as the deployments make them: ./definitions.json (users named
// after the apps, their permissions and topic permissions) with a fresh password per app,
// and the RABBITMQ_URL each app signs in with. Used by the Kubernetes dev overlay's
// make-secrets.mjs and by Docker Compose's (deploy/compose/make-secrets.mjs).
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The cloud apps, each with a broker login of its own named after it. */
export const APPS = [
  'api-gateway',
  'auth-service',
  'project-service',
  'database-provisioner',
  'backup-service',
  'pitr-worker',
  'notification-service',
];

/** A password that needs no escaping in a URL. */
export const password = () => randomBytes(24).toString('hex');

/**
 * RabbitMQ's rabbit_password_hashing_sha256: base64 of a 4-byte salt followed by
 * SHA-256(salt + password).
 */
export function rabbitPasswordHash(plain, salt = randomBytes(4)) {
  const digest = createHash('sha256').update(salt).update(plain, 'utf8').digest();
  return Buffer.concat([salt, digest]).toString('base64');
}

/**
 * definitions.json with a password hash for every app, and each app's RABBITMQ_URL to the
 * broker at `host` (name:port), on the definitions' virtual host. Each password is the
 * app's in `passwords` (a login kept from before) or a fresh one.
 */
export function brokerLogins(host, passwords = {}) {
  const definitions = JSON.parse(
    readFileSync(new URL('./definitions.json', import.meta.url), 'utf8'),
  );
  const vhost = definitions.vhosts[0].name;
  const urls = {};
  for (const app of APPS) {
    const user = definitions.users.find((candidate) => candidate.name === app);
    if (!user) throw new Error(`rabbitmq/definitions.json has no user ${app}`);
    const brokerPassword = passwords[app] ?? password();
    user.password_hash = rabbitPasswordHash(brokerPassword);
    urls[app] = `amqp://${app}:${brokerPassword}@${host}/${vhost}`;
  }
  return { definitions, urls };
}
