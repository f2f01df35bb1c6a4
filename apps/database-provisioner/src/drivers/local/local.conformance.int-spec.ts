import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@pgcloud/testing';
import { driverConformance } from '../conformance/driver-conformance.js';
import { LocalDriver } from './local.driver.js';
import { serverPaths } from './server-paths.js';

driverConformance('local', () => {
  // In the temp folder, like the test stacks: PostgreSQL's user reaches it, sockets stay short.
  const dataDir = join(tmpdir(), 'pgcloud-test-drivers', randomBytes(4).toString('hex'));
  const pgBinDir =
    process.env.PG_BIN_DIR ?? execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  const driver = new LocalDriver({
    pgBinDir,
    osUser: process.env.PG_OS_USER ?? 'postgres',
    dataDir,
    host: '127.0.0.1',
    listenAddress: '127.0.0.1',
  });
  return Promise.resolve({
    driver,
    region: 'local',
    port: () => freePort(),
    pgBinDir,
    async lose(serverId) {
      const pidFile = join(serverPaths(dataDir, serverId).pgdata, 'postmaster.pid');
      process.kill(Number((await readFile(pidFile, 'utf8')).split('\n')[0]), 'SIGKILL');
    },
    async stop() {
      for (const serverId of await driver.list()) await driver.destroy(serverId);
      await rm(dataDir, { recursive: true, force: true });
    },
  });
});
