// `npm run up`: installs dependencies when missing, builds, and runs the whole stack.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { CEPH, ensurePackages } from './system-packages.mjs';

const root = new URL('..', import.meta.url);
const run = (command) => execSync(command, { cwd: root, stdio: 'inherit' });

// Settings from a .env file in the checkout, when there is one (see .env.example).
if (existsSync(new URL('.env', root))) process.loadEnvFile(new URL('.env', root));

if (!existsSync(new URL('node_modules/.package-lock.json', root))) {
  console.log('installing dependencies (npm ci) ...');
  run('npm ci');
}
// The local S3 (unless S3_ENDPOINT names one) runs Ceph's daemons from Debian's packages.
if (!process.env.S3_ENDPOINT) ensurePackages(CEPH);
run('npx tsc -b');
const { runUp } = await import('@pgcloud/testing');
await runUp();
