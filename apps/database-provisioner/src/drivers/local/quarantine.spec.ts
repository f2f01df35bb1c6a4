import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { purgeSetAside, setAside } from './quarantine.js';

describe('quarantine of servers without a record', () => {
  const root = mkdtempSync(join(tmpdir(), 'pgcloud-quarantine-'));
  const quarantine = join(root, 'quarantine');
  after(() => rmSync(root, { recursive: true, force: true }));

  function server(id: string): string {
    const dir = join(root, 'servers', id);
    mkdirSync(join(dir, 'pgdata'), { recursive: true });
    writeFileSync(join(dir, 'pgdata', 'PG_VERSION'), '15\n');
    return dir;
  }

  it('moves the whole directory aside, data intact, named by id and time', async () => {
    const moved = await setAside(quarantine, server('srv_a'), 'srv_a', 1_700_000_000_000);
    assert.equal(moved, join(quarantine, 'srv_a@1700000000000'));
    assert.equal(existsSync(join(root, 'servers', 'srv_a')), false);
    assert.equal(existsSync(join(moved, 'pgdata', 'PG_VERSION')), true);
  });

  it('deletes only what was set aside before the bound, and nothing it did not name', async () => {
    await setAside(quarantine, server('srv_b'), 'srv_b', 1_800_000_000_000);
    mkdirSync(join(quarantine, 'not-ours'));
    assert.deepEqual(await purgeSetAside(quarantine, 1_750_000_000_000), ['srv_a']);
    assert.equal(existsSync(join(quarantine, 'srv_b@1800000000000')), true);
    assert.equal(existsSync(join(quarantine, 'not-ours')), true);
    assert.deepEqual(await purgeSetAside(join(root, 'missing'), Date.now()), []);
  });
});
