import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { IMAGE_DATA_DIR, containerName, containerRun } from './container-app.js';

describe('containerRun: the docker run command line of a stack app', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pgcloud-container-run-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  const run = containerRun(
    { image: 'pgcloud:test', docker: '/usr/bin/docker' },
    {
      app: 'backup-service',
      name: 'backup-service',
      stackId: '20261124-abc123',
      dataDir,
      settings: {
        DATABASE_URL: 'postgres://u:sealed-password@127.0.0.1:5432/x',
        S3_SECRET_ACCESS_KEY: 'a-secret-key-value',
        DATA_DIR: '/host/path',
        PG_OS_USER: 'postgres',
        MANAGEMENT_PORT: '41234',
      },
    },
  );

  it('runs the image on the host network, read-only, labelled and named after the stack', () => {
    assert.equal(run.command, '/usr/bin/docker');
    assert.deepEqual(run.args.slice(0, 11), [
      'run',
      '--rm',
      '--name',
      containerName('20261124-abc123', 'backup-service'),
      '--label',
      'pgcloud.stack=20261124-abc123',
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
    ]);
    assert.equal(run.args.at(-1), 'pgcloud:test');
    assert.ok(run.args.includes(`${join(dataDir, 'backup-service')}:${IMAGE_DATA_DIR}`));
    assert.ok(statSync(join(dataDir, 'backup-service')).isDirectory());
  });

  it('passes settings by name only, so no value (no secret) is in its arguments', () => {
    const joined = run.args.join(' ');
    assert.doesNotMatch(joined, /sealed-password|a-secret-key-value/);
    for (const name of ['DATABASE_URL', 'S3_SECRET_ACCESS_KEY', 'MANAGEMENT_PORT', 'APP'])
      assert.ok(run.args.join(' ').includes(`--env ${name}`), name);
    assert.equal(run.env['S3_SECRET_ACCESS_KEY'], 'a-secret-key-value');
    assert.equal(run.env['APP'], 'backup-service');
  });

  it("leaves out this machine's paths: the image has its own DATA_DIR and PostgreSQL", () => {
    assert.equal(run.env['DATA_DIR'], IMAGE_DATA_DIR);
    assert.ok(!run.args.join(' ').includes('--env PG_OS_USER'));
    assert.ok(!run.args.join(' ').includes('--env PG_BIN_DIR'));
  });
});
