import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { route, runCli } from './fake-api.testing.js';

const BACKUP = 'bkp_aaaaaaaaaaaaaaaaaaaa';
const RESTORE = 'rstr_aaaaaaaaaaaaaaaaaaaa';
const LINK = 'http://s3.test/backups/object?X-Amz-Signature=secret-signature';
const ARCHIVE = Buffer.from('a tar of the data directory, zstd-compressed '.repeat(100));

function backup(status: string, extra: Record<string, unknown> = {}) {
  return {
    id: BACKUP,
    database_id: 'db_aaaaaaaaaaaaaaaaaaaa',
    type: 'manual',
    status,
    size_bytes: status === 'completed' ? ARCHIVE.length : 0,
    created_at: '2026-01-01T00:00:00.000Z',
    ...(status === 'completed'
      ? { checksum_sha256: createHash('sha256').update(ARCHIVE).digest('hex') }
      : {}),
    ...extra,
  };
}

function restore(status: string, extra: Record<string, unknown> = {}) {
  return {
    id: RESTORE,
    kind: 'backup',
    backup_id: BACKUP,
    status,
    started_at: '2026-01-01T00:00:00.000Z',
    ...extra,
  };
}

/** The routes of a completed backup whose object holds `bytes`. */
function downloadRoutes(bytes: Buffer) {
  return [
    route('GET', `/backups/${BACKUP}/download`, {
      download_url: LINK,
      expires_at: '2026-01-01T00:15:00.000Z',
    }),
    route('GET', `/backups/${BACKUP}`, backup('completed')),
    (request: { url: URL }) =>
      request.url.host === 's3.test'
        ? new Response(bytes, { headers: { 'content-length': String(bytes.length) } })
        : undefined,
  ];
}

const inShop = ['--db', 'shop'];
const folder = () => mkdtempSync(join(tmpdir(), 'pgcloud-download-'));

describe('backups download', () => {
  it('writes the file under its name only once the SHA-256 matches, and prints the path', async (t) => {
    const file = join(folder(), 'new', 'shop.tar.zst');
    const result = await runCli(
      t,
      ['backups', 'download', BACKUP, '-o', file, '--quiet', ...inShop],
      downloadRoutes(ARCHIVE),
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.deepEqual(readFileSync(file), ARCHIVE);
    assert.deepEqual(readdirSync(join(file, '..')), ['shop.tar.zst'], 'no temporary file left');
    assert.equal(result.stdout, `${file}\n`);
    assert.ok(!`${result.stdout}${result.stderr}`.includes('secret-signature'));
  });

  it('prints the backup with --json and the path on stderr', async (t) => {
    const file = join(folder(), 'shop.tar.zst');
    const result = await runCli(
      t,
      ['backups', 'download', BACKUP, '-o', file, '--json', ...inShop],
      downloadRoutes(ARCHIVE),
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), backup('completed'));
    assert.match(result.stderr, /shop\.tar\.zst .*SHA-256 verified/);
  });

  it('leaves no file when the bytes do not match, exiting 1 with CHECKSUM_MISMATCH', async (t) => {
    const tampered = Buffer.from(ARCHIVE);
    tampered[tampered.length >> 1] ^= 0xff;
    const dir = join(folder(), 'tampered');
    const result = await runCli(
      t,
      ['backups', 'download', BACKUP, '-o', join(dir, 'copy.tar.zst'), '--json', ...inShop],
      downloadRoutes(tampered),
    );
    assert.equal(result.exitCode, 1);
    assert.equal(
      (JSON.parse(result.stderr.trim().split('\n').pop() ?? '') as { code: string }).code,
      'CHECKSUM_MISMATCH',
    );
    assert.match(result.stderr, /checksum/);
    assert.deepEqual(readdirSync(dir), []);
  });

  it('refuses an existing file with exit 5 before asking anything, and replaces it with --force', async (t) => {
    const file = join(folder(), 'shop.tar.zst');
    writeFileSync(file, 'mine');
    const refused = await runCli(
      t,
      ['backups', 'download', BACKUP, '-o', file, ...inShop],
      downloadRoutes(ARCHIVE),
    );
    assert.equal(refused.exitCode, 5);
    assert.match(refused.stderr, /FILE_EXISTS/);
    assert.deepEqual(refused.requests, []);
    assert.equal(readFileSync(file, 'utf8'), 'mine');

    const forced = await runCli(
      t,
      ['backups', 'download', BACKUP, '-o', file, '--force', ...inShop],
      downloadRoutes(ARCHIVE),
    );
    assert.equal(forced.exitCode, undefined, forced.stderr);
    assert.deepEqual(readFileSync(file), ARCHIVE);
  });

  it('names the file <database>-<backup>.tar.zst by default', async (t) => {
    const dir = folder();
    const before = process.cwd();
    process.chdir(dir);
    t.after(() => process.chdir(before));
    const result = await runCli(
      t,
      ['backups', 'download', BACKUP, ...inShop],
      downloadRoutes(ARCHIVE),
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.ok(existsSync(join(dir, `shop-${BACKUP}.tar.zst`)));
  });

  it('never prints the link when the storage refuses it', async (t) => {
    const dir = folder();
    const result = await runCli(
      t,
      ['backups', 'download', BACKUP, '-o', join(dir, 'x.tar.zst'), ...inShop],
      [
        (request) =>
          request.url.host === 's3.test' ? new Response('<Error/>', { status: 403 }) : undefined,
        ...downloadRoutes(ARCHIVE),
      ],
    );
    assert.equal(result.exitCode, 1);
    assert.match(result.stderr, /storage answered 403/);
    assert.ok(!result.stderr.includes('s3.test'));
    assert.deepEqual(readdirSync(dir), []);
  });
});

describe('backups create --wait', () => {
  it('polls the backup until it completes and prints it as GET answers', async (t) => {
    const result = await runCli(
      t,
      ['backups', 'create', '--wait', '--json', ...inShop],
      [
        route('POST', '/databases/shop/backups', {
          id: BACKUP,
          type: 'manual',
          status: 'pending',
          created_at: '2026-01-01T00:00:00.000Z',
        }),
        route('GET', `/backups/${BACKUP}`, backup('completed')),
      ],
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), backup('completed'));
    assert.match(result.stderr, /backup bkp_\w+: completed/);
  });

  it('exits 1 with the reason when it fails, the final state still on stdout with --json', async (t) => {
    const failed = backup('failed', { error: 'pg_basebackup lost its connection' });
    const result = await runCli(
      t,
      ['backups', 'create', '--wait', '--json', ...inShop],
      [
        route('POST', '/databases/shop/backups', { id: BACKUP, type: 'manual', status: 'pending' }),
        route('GET', `/backups/${BACKUP}`, failed),
      ],
    );
    assert.equal(result.exitCode, 1);
    assert.deepEqual(JSON.parse(result.stdout), failed);
    assert.match(result.stderr, /BACKUP_FAILED.*pg_basebackup lost its connection/);
  });
});

describe('restore', () => {
  it('restores --into a new database and waits on the restore record', async (t) => {
    const result = await runCli(
      t,
      ['restore', BACKUP, '--into', 'shop-copy', '--wait', '--json', ...inShop],
      [
        route('POST', `/backups/${BACKUP}/restore`, {
          restore_id: RESTORE,
          status: 'pending',
          started_at: '2026-01-01T00:00:00.000Z',
        }),
        route('GET', `/databases/shop/restores/${RESTORE}`, restore('completed')),
      ],
    );
    assert.equal(result.exitCode, undefined, result.stderr);
    assert.deepEqual(result.requests[0]?.body, { target_database: 'shop-copy' });
    assert.deepEqual(JSON.parse(result.stdout), restore('completed'));
  });

  it('restores in place without --into, and exits 1 when the restore is cancelled or fails', async (t) => {
    for (const status of ['failed', 'cancelled']) {
      const ended = restore(status, { error: 'stopped' });
      const result = await runCli(
        t,
        ['restore', BACKUP, '--wait', ...inShop],
        [
          route('POST', `/backups/${BACKUP}/restore`, { restore_id: RESTORE, status: 'pending' }),
          route('GET', `/restores/${RESTORE}`, ended),
        ],
      );
      assert.deepEqual(result.requests[0]?.body, {});
      assert.equal(result.exitCode, 1);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, new RegExp(`restore rstr_\\w+ ${status}: stopped`));
    }
  });
});
