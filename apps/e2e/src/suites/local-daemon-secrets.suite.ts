import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { LocalDatabaseDetail } from '@pgcloud/contracts';
import { expectData } from '../support/assertions.js';
import { settledLog } from '../support/local-daemon.js';
import { sharedDaemon } from '../support/shared-daemon.js';

describe('local daemon: secrets stay out of the logs', () => {
  it("writes neither its token nor the login role's password to its log or its server's", async () => {
    const daemon = await sharedDaemon();
    const api = await daemon.api();
    const shown = expectData<LocalDatabaseDetail>(
      await api.post('/databases', { name: 'log-check' }),
      201,
    );
    expectData(await api.delete('/databases/log-check'), 200);
    const secrets = { token: await daemon.token(), password: shown.connection.password };
    const logs = [
      daemon.logFile,
      join(daemon.env['DAEMON_DATA_DIR'] ?? '', 'server', 'postgresql.log'),
    ];
    for (const file of logs) {
      // Read once the output of the requests above has all reached it.
      const text = await settledLog(file);
      assert.ok(text.length > 0, `${file} is not empty`);
      for (const [what, secret] of Object.entries(secrets))
        assert.ok(!text.includes(secret), `the ${what} is in ${file}`);
    }
  });
});
