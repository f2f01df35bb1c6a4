import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '@pgcloud/config';
import { loadConfig } from './config.js';

describe('local-daemon config', () => {
  it('defaults to port 5480, token and data under the XDG folders', () => {
    const config = loadConfig({ HOME: '/home/ada' });
    assert.equal(config.DAEMON_PORT, 5480);
    assert.equal(config.tokenFile, '/home/ada/.config/pgcloud/daemon.token');
    assert.equal(config.dataDir, '/home/ada/.local/share/pgcloud');
    assert.equal(config.DAEMON_DATABASE_URL, undefined);
    assert.equal(config.DAEMON_CATALOG_DATABASE, 'pgcloud_daemon');
  });

  it('takes XDG_CONFIG_HOME and XDG_DATA_HOME, unless they are relative', () => {
    const xdg = loadConfig({ HOME: '/h', XDG_CONFIG_HOME: '/cfg', XDG_DATA_HOME: '/data' });
    assert.equal(xdg.tokenFile, '/cfg/pgcloud/daemon.token');
    assert.equal(xdg.dataDir, '/data/pgcloud');
    const relative = loadConfig({ HOME: '/h', XDG_CONFIG_HOME: 'cfg', XDG_DATA_HOME: 'data' });
    assert.equal(relative.tokenFile, '/h/.config/pgcloud/daemon.token');
    assert.equal(relative.dataDir, '/h/.local/share/pgcloud');
  });

  it('takes DAEMON_TOKEN_FILE and DAEMON_DATA_DIR as they are', () => {
    const config = loadConfig({ DAEMON_TOKEN_FILE: '/t/token', DAEMON_DATA_DIR: '/d' });
    assert.equal(config.tokenFile, '/t/token');
    assert.equal(config.dataDir, '/d');
  });

  it('names the variable at fault', () => {
    for (const [variable, value] of [
      ['DAEMON_PORT', 'http'],
      ['DAEMON_PG_PORT', '80'],
      ['DAEMON_DATABASE_URL', 'mysql://localhost/x'],
      ['DAEMON_DATABASE_URL', 'postgres:///socket-only'],
      ['DAEMON_DATABASE_URL', 'postgres://@127.0.0.1/postgres'],
      ['DAEMON_DATABASE_URL', 'postgres://me@/postgres'],
      ['DAEMON_CATALOG_DATABASE', 'Catalog; DROP'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [variable]: value }),
        (err: unknown) =>
          err instanceof ConfigError && err.problems.some((p) => p.startsWith(variable)),
        `${variable}=${value}`,
      );
    }
    assert.doesNotThrow(() =>
      loadConfig({ DAEMON_DATABASE_URL: 'postgresql://me:pw@127.0.0.1:5432/postgres' }),
    );
  });
});
