import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findSecretsInLogs } from './secret-scan.js';

describe('findSecretsInLogs', () => {
  const token = `pgc_${'Zx9'.repeat(13)}Q`;

  it('finds a token planted in a log, and names the file without the whole token', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgcloud-scan-'));
    try {
      writeFileSync(join(dir, 'api-gateway.log'), 'LOG [HTTP] GET /projects 200\n');
      writeFileSync(join(dir, 'auth-service.log'), `LOG issued ${token} to user_x\n`);
      const { leaks, bytesScanned } = findSecretsInLogs(
        [dir],
        new Set([token, 'device-code-never-logged']),
      );
      assert.equal(leaks.length, 1);
      assert.equal(leaks[0]?.file, join(dir, 'auth-service.log'));
      assert.ok(!JSON.stringify(leaks).includes(token));
      assert.ok(bytesScanned > 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds nothing in clean logs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgcloud-scan-'));
    try {
      writeFileSync(join(dir, 'api-gateway.log'), 'LOG [HTTP] POST /auth/device/token 200\n');
      assert.deepEqual(findSecretsInLogs([dir], new Set([token])).leaks, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
