import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertSocketPathFits, serverPaths } from './server-paths.js';

describe('server paths', () => {
  it('keeps every server under the servers directory', () => {
    const paths = serverPaths('/data', 'srv_abc');
    assert.equal(paths.pgdata, '/data/local/servers/srv_abc/pgdata');
    assert.equal(paths.socketDir, '/data/local/servers/srv_abc/socket');
    for (const id of ['../etc', 'a/b', '', '.', 'srv abc']) {
      assert.throws(() => serverPaths('/data', id), /not a server id/);
    }
  });

  it('names DATA_DIR when a socket path would pass the kernel limit', () => {
    const id = `srv_${'a'.repeat(20)}`;
    assert.doesNotThrow(() => assertSocketPathFits('/srv/pgcloud/.data', id, 65535));
    assert.throws(() => assertSocketPathFits(`/${'d'.repeat(60)}`, id, 65535), /DATA_DIR/);
    assert.throws(() => assertSocketPathFits('/data', id, 70000), /not a port/);
  });
});
