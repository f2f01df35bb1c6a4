import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { OsUser } from '@pgcloud/postgres';
import { clearRecoverySettings, writeRecoverySettings } from './recovery-settings.js';
import { autoConf } from './restored-data.js';

// The files are written as this process's user: nothing to switch to.
const SELF: OsUser = { name: 'self', uid: process.getuid?.() ?? 0, gid: 0, switchUser: false };

describe('recovery settings in postgresql.auto.conf', () => {
  let dir: string;
  const autoConfText = () => readFile(join(dir, 'postgresql.auto.conf'), 'utf8');
  const base = autoConf(["default_transaction_read_only = 'on'"]);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pgcloud-recovery-settings-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('writes them after the data directory’s own, quoted, in place of earlier ones', async () => {
    await writeFile(join(dir, 'postgresql.auto.conf'), base);
    await writeRecoverySettings(
      dir,
      { restore_command: "cp '/spool/%f' '%p'", recovery_target_name: 'before' },
      SELF,
    );
    await writeRecoverySettings(dir, { restore_command: '/bin/false' }, SELF);
    const text = await autoConfText();
    assert.ok(text.startsWith(base), text);
    assert.match(text, /^restore_command = '\/bin\/false'$/m);
    assert.doesNotMatch(text, /recovery_target_name|\/spool/, 'the earlier block is gone');
    await clearRecoverySettings(dir, SELF);
    assert.equal(await autoConfText(), base);
  });

  it('refuses a value that would end its line, writing nothing', async () => {
    await writeFile(join(dir, 'postgresql.auto.conf'), base);
    await assert.rejects(
      writeRecoverySettings(dir, { recovery_target_name: "x'\nrestore_command = 'id'" }, SELF),
      /line breaks/,
    );
    assert.equal(await autoConfText(), base);
  });
});
