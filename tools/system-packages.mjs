// Debian packages pgcloud runs beside its npm dependencies: the local S3's Ceph daemons,
// for the browser test Chromium, for the container tests Docker, docker-compose and
// mmdebstrap, and promtool for the alerting rules' tests. `npm run up` and `npm test` install what is missing
// when they can (root with apt-get, as on a fresh machine of ours), else say how.
import { execSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

const BIN_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

function installed(program) {
  return BIN_DIRS.some((dir) => {
    try {
      accessSync(`${dir}/${program}`, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The local S3's daemons (a single-node Ceph RGW). */
export const CEPH = {
  programs: ['radosgw', 'ceph-mon', 'ceph-osd'],
  packages: ['radosgw', 'ceph-mon', 'ceph-osd'],
};
/** Headless Chromium for the /device page's browser test. */
export const CHROMIUM = { programs: ['chromium'], packages: ['chromium'] };

/** The Docker engine and client (Debian's docker.io). */
export const DOCKER = { programs: ['dockerd', 'docker'], packages: ['docker.io'] };
/** Compose v1 (Python), to check docker-compose.yml. */
export const DOCKER_COMPOSE = { programs: ['docker-compose'], packages: ['docker-compose'] };
/** promtool, which checks and unit-tests the alerting rules (deploy/monitoring). */
export const PROMETHEUS = { programs: ['promtool'], packages: ['prometheus'] };
/** Makes the Debian base image the test image is built from (no registry is reachable). */
export const MMDEBSTRAP = { programs: ['mmdebstrap'], packages: ['mmdebstrap'] };

/** Installs the packages of every group whose programs are missing; throws when it cannot. */
export function ensurePackages(...groups) {
  const missing = groups.filter((group) => !group.programs.every(installed));
  if (missing.length === 0) return;
  const packages = missing.flatMap((group) => group.packages);
  const command = `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  if (process.getuid?.() !== 0 || !installed('apt-get'))
    throw new Error(`pgcloud needs Debian's ${packages.join(', ')}; install them with: ${command}`);
  console.log(`installing ${packages.join(', ')} (${command}) ...`);
  execSync(`apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${command} -qq`, {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
