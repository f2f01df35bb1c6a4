// What `npm run up` and `npm run daemon` do first: read .env, install dependencies when
// missing, and build.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const run = (command) => execSync(command, { cwd: root, stdio: 'inherit' });

export function prepare() {
  // Settings from a .env file in the checkout, when there is one (see .env.example).
  if (existsSync(new URL('.env', root))) process.loadEnvFile(new URL('.env', root));
  if (!existsSync(new URL('node_modules/.package-lock.json', root))) {
    console.log('installing dependencies (npm ci) ...');
    run('npm ci');
  }
  run('npx tsc -b');
}
