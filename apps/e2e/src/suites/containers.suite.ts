import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { CreatedBackup, CreatedRestore, Project } from '@pgcloud/contracts';
import { ApiClient, WORKSPACE_ROOT, signIn } from '@pgcloud/testing';
import { STACK_APPS, Stack, containerName } from '@pgcloud/devstack';
import { expectData } from '../support/assertions.js';
import { waitForBackup } from '../support/backups.js';
import { TEST_IMAGE, buildTestImage, dockerClient, jsonLines } from '../support/containers.js';
import { psql, runningDatabase, waitForStatus } from '../support/databases.js';
import { waitForRestore } from '../support/restores.js';

const BUILD_TIMEOUT_MS = 20 * 60_000;

/**
 * A connection string as a careful psql user writes it: the server's certificate checked
 * against the deployment's CA and its name against the host (verify-full).
 */
function verifyFull(connectionString: string, caFile: string): string {
  const url = new URL(connectionString);
  url.searchParams.set('sslmode', 'verify-full');
  url.searchParams.set('sslrootcert', caFile);
  return url.toString();
}

describe('containers: the seven cloud apps run from the image (deploy/Dockerfile)', () => {
  let docker: string;
  let stack: Stack | undefined;
  const scratch = mkdtempSync(join(tmpdir(), 'pgcloud-containers-'));

  before(
    async () => {
      docker = dockerClient();
      await buildTestImage(docker);
      stack = await Stack.start({
        // A quick device flow and roomy Free buckets, as ownStack gives (status polls).
        env: {
          DEVICE_POLL_INTERVAL_SECONDS: '1',
          RATE_LIMIT_FREE_BURST: '1000',
          RATE_LIMIT_FREE_PER_MINUTE: '60000',
          LOG_LEVEL: 'debug',
        },
        containers: { image: TEST_IMAGE, docker },
      });
    },
    { timeout: BUILD_TIMEOUT_MS },
  );

  // Every container goes, also when a test failed; the log scan at the end reads their logs.
  after(async () => {
    await stack?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('runs each app as the image user on a read-only root filesystem', async () => {
    const running = await promisify(execFile)(docker, [
      'ps',
      '--filter',
      `label=pgcloud.stack=${stack!.id}`,
      '--format',
      '{{.Names}}',
    ]);
    assert.equal(running.stdout.trim().split('\n').length, STACK_APPS.length, running.stdout);
    const container = containerName(stack!.id, 'database-provisioner');
    // The provisioner finds PostgreSQL 15's programs where the image's PG_BIN_DIR says.
    const { stdout } = await promisify(execFile)(docker, [
      'exec',
      container,
      'sh',
      '-c',
      'id -u; touch /app/probe 2>/dev/null && echo writable || echo read-only; "$PG_BIN_DIR/pg_ctl" --version',
    ]);
    const [uid, root, pgCtl] = stdout.trim().split('\n');
    assert.equal(uid, '10001');
    assert.equal(root, 'read-only');
    assert.match(pgCtl ?? '', /PostgreSQL\) 15\./);
  });

  it('signs in, provisions a database psql reaches over verified TLS, backs it up and restores it', async () => {
    const owner = await signIn(new ApiClient(stack!.baseUrl), 'container-smoke');
    const project = expectData<Project>(await owner.api.post('/projects', { name: 'boxed' }), 201);
    const { connection } = await runningDatabase(owner.api, project.id, 'crate');
    const ca = await fetch(`${stack!.baseUrl}/ca.pem`);
    assert.equal(ca.status, 200);
    const caFile = join(scratch, 'ca.pem');
    writeFileSync(caFile, await ca.text());
    const url = verifyFull(connection.connection_string, caFile);

    assert.equal(await psql(url, 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'), 't');
    await psql(url, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('before')");
    const databasePath = `/projects/${project.id}/databases/crate`;
    const created = expectData<CreatedBackup>(await owner.api.post(`${databasePath}/backups`), 201);
    const backup = await waitForBackup(owner.api, `${databasePath}/backups`, created.id);
    assert.equal(backup.status, 'completed', backup.error);
    await psql(url, "DELETE FROM notes; INSERT INTO notes VALUES ('after')");

    const restore = expectData<CreatedRestore>(
      await owner.api.post(`${databasePath}/backups/${backup.id}/restore`),
      201,
    );
    const done = await waitForRestore(owner.api, databasePath, restore.restore_id);
    assert.equal(done.status, 'completed', done.error);
    await waitForStatus(owner.api, project.id, 'crate', ['running']);
    assert.equal(await psql(url, "SELECT string_agg(body, ',') FROM notes"), 'before');
  });

  it('answers /livez, /readyz and /metrics on the management port of each container', async () => {
    for (const app of STACK_APPS) {
      const base = stack!.managementUrl(app);
      for (const probe of ['/livez', '/readyz'])
        assert.equal((await fetch(`${base}${probe}`)).status, 200, `${app} ${probe}`);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(metrics, new RegExp(`service="${app}"`), `${app} labels its metrics`);
      if (app === 'api-gateway')
        assert.match(
          metrics,
          /pgcloud_http_request_duration_seconds_count\{[^}]*route="\/projects"/,
        );
    }
  });

  it('logs one JSON object per line, carrying request_id from the gateway and a service', () => {
    const carrying = (app: string) =>
      jsonLines(stack!.logOf(app), app).filter(
        (line) => typeof line['request_id'] === 'string' && line['request_id'] !== '',
      ).length;
    assert.ok(carrying('api-gateway') > 0, 'the gateway logged a request_id');
    const services = ['auth-service', 'project-service', 'database-provisioner', 'backup-service'];
    assert.ok(
      services.some((app) => carrying(app) > 0),
      'a service logged a request_id',
    );
    for (const app of ['pitr-worker', 'notification-service', ...services])
      jsonLines(stack!.logOf(app), app);
  });

  it('has a docker-compose.yml that docker-compose accepts', async () => {
    await promisify(execFile)('docker-compose', ['--file', 'docker-compose.yml', 'config', '-q'], {
      cwd: WORKSPACE_ROOT,
    });
  });
});
