import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { PgTools } from '@pgcloud/postgres';
import { finishRestore, isSwapped, swapRestored, undoRestore } from './local-restore.js';
import { CHECKED_MARKER, restorePaths } from './restore-paths.js';
import type { ServerPaths } from './server-paths.js';
import { serverPaths } from './server-paths.js';

// The swap's steps on plain directories: wherever a crash stops it, calling it again (or
// undoing it) ends with one whole data directory in place, never a mix.
const RESTORE = 'rstr_aaaaaaaaaaaaaaaaaaaa';

describe('the restore swap, step by step', () => {
  let dataDir: string;
  let server: ServerPaths;
  let stops: number;
  const stopLive = (): Promise<void> => {
    stops += 1;
    return Promise.resolve();
  };
  const tools: PgTools = {
    binDir: '/nonexistent',
    osUser: { name: 'x', uid: 0, gid: 0, switchUser: false },
  };
  const write = (dir: string, what: string, checked = false): void => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'PG_VERSION'), what);
    if (checked) writeFileSync(join(dir, CHECKED_MARKER), RESTORE);
  };
  const holds = (dir: string): string => readFileSync(join(dir, 'PG_VERSION'), 'utf8');

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'pgcloud-swap-'));
    server = serverPaths(dataDir, 'srv_aaaaaaaaaaaaaaaaaaaa');
    stops = 0;
    write(server.pgdata, 'live');
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('swaps a checked restore in, keeping the live data until the restore is finished', async () => {
    write(restorePaths(server).restoreDir, 'restored', true);
    assert.equal(await isSwapped(server, RESTORE), false);
    assert.equal(await swapRestored(server, RESTORE, stopLive), true);
    assert.equal(holds(server.pgdata), 'restored');
    assert.equal(holds(restorePaths(server).previousDir), 'live');
    assert.equal(stops, 1);
    assert.equal(await isSwapped(server, RESTORE), true);
    assert.equal(await swapRestored(server, RESTORE, stopLive), true, 'again: already done');
    assert.equal(stops, 1);
  });

  it('swaps nothing that was not checked', async () => {
    write(restorePaths(server).restoreDir, 'half-built');
    assert.equal(await swapRestored(server, RESTORE, stopLive), false);
    assert.equal(holds(server.pgdata), 'live');
    assert.equal(stops, 0);
  });

  it('carries on after a crash between the two renames', async () => {
    const paths = restorePaths(server);
    write(paths.restoreDir, 'restored', true);
    rmSync(server.pgdata, { recursive: true });
    write(paths.previousDir, 'live');
    assert.equal(await isSwapped(server, RESTORE), true);
    assert.equal(await swapRestored(server, RESTORE, stopLive), true);
    assert.equal(holds(server.pgdata), 'restored');
    assert.equal(stops, 0, 'the live server was stopped before the crash');
  });

  it('undoes a swap: the live data comes back whole', async () => {
    write(restorePaths(server).restoreDir, 'restored', true);
    await swapRestored(server, RESTORE, stopLive);
    assert.equal(await undoRestore(server, tools, stopLive), true);
    assert.equal(holds(server.pgdata), 'live');
    assert.equal(existsSync(restorePaths(server).previousDir), false);
    assert.equal(await isSwapped(server, RESTORE), false);
  });

  it('undoes a build that was never swapped in without touching the live data', async () => {
    write(restorePaths(server).restoreDir, 'half-built');
    assert.equal(await undoRestore(server, tools, stopLive), false);
    assert.equal(holds(server.pgdata), 'live');
    assert.equal(existsSync(restorePaths(server).restoreDir), false);
    assert.equal(stops, 0);
  });

  it('finishes by dropping the old data whole; after a crash mid-finish, undo keeps the restore', async () => {
    const paths = restorePaths(server);
    write(paths.restoreDir, 'restored', true);
    await swapRestored(server, RESTORE, stopLive);
    // A crash right after the old data was moved out of `previous`, before it was removed.
    renameSync(paths.previousDir, paths.trashDir);
    assert.equal(await isSwapped(server, RESTORE), true, 'the restore is still seen as swapped');
    assert.equal(await undoRestore(server, tools, stopLive), false, 'nothing partial comes back');
    assert.equal(holds(server.pgdata), 'restored');
    const { removed } = await finishRestore(server, tools);
    await removed;
    assert.equal(existsSync(paths.trashDir), false);
    assert.equal(holds(server.pgdata), 'restored');
    // A retry after the finish finishes again; it never builds afresh over the open data.
    assert.equal(await isSwapped(server, RESTORE), true);
    assert.equal(await swapRestored(server, RESTORE, stopLive), true);
    assert.equal(holds(server.pgdata), 'restored');
    // The next restore is not taken in by this one's marker.
    assert.equal(await isSwapped(server, 'rstr_next'), false);
    write(paths.restoreDir, 'restored again');
    writeFileSync(join(paths.restoreDir, CHECKED_MARKER), 'rstr_next');
    assert.equal(await swapRestored(server, 'rstr_next', stopLive), true);
    assert.equal(holds(server.pgdata), 'restored again');
  });
});
