// What `npm run up`, `npm run daemon` and `npm test` do first: read .env, install
// dependencies when missing, and build.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const run = (command) =>
  execSync(command, { cwd: root, stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false' } });

/** Runs `npm ci` when the checkout has no installed dependencies (a fresh clone). */
export function installDependencies() {
  if (existsSync(new URL('node_modules/.package-lock.json', root))) return;
  console.log('installing dependencies (npm ci) ...');
  run('npm ci --no-audit --no-fund');
}

/**
 * Type checks and builds every package (`--no-install`, so npx never fetches a stranger),
 * then checks that the typed API client was regenerated after the gateway's routes changed.
 */
export function build() {
  run('npx --no-install tsc -b');
  run('node tools/openapi.mjs check');
}

export function prepare() {
  // Settings from a .env file in the checkout, when there is one (see .env.example).
  if (existsSync(new URL('.env', root))) process.loadEnvFile(new URL('.env', root));
  installDependencies();
  build();
}
