import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestMicroservice } from '@nestjs/common';
import type { RequestContext } from '@pgcloud/contracts';
import { AUTH_PATTERNS } from '@pgcloud/contracts';
import { startService } from '@pgcloud/messaging';
import { Isolation } from '@pgcloud/devstack';
import { eventually } from '@pgcloud/testing';
import { AppModule } from '../app.module.js';
import { loadConfig } from '../config.js';
import { AuthSweep } from './auth-sweep.js';

const ctx: RequestContext = { requestId: 'int-auth-sweep' };

describe('auth-service housekeeping sweep', () => {
  const isolation = Isolation.create({
    AUTH_SWEEP_INTERVAL_SECONDS: '1',
    DEVICE_WRONG_CODE_WINDOW_SECONDS: '900',
  });
  const config = loadConfig({ ...process.env, ...isolation.envOf('auth-service') });
  let service: INestMicroservice;

  before(async () => {
    await isolation.brokerLogins();
    service = await startService(AppModule.forRoot(config), 'auth', config);
    await isolation.sql(
      `INSERT INTO auth.users (id, identity_provider, identity_id, login, email)
       VALUES ('usr_sweep', 'local', 9001, 'sweeper', 'sweeper@example.com')`,
    );
  });

  after(async () => {
    await service?.close();
    await isolation.cleanup();
  });

  /** The ids of the rows of a table whose id starts with `prefix`, sorted. */
  async function idsOf(table: string, prefix: string): Promise<string[]> {
    const rows = await isolation.sql<{ id: string }>(
      `SELECT id FROM auth.${table} WHERE id LIKE $1 ORDER BY id`,
      [`${prefix}%`],
    );
    return rows.map((row) => row.id);
  }

  it('deletes device requests a day past expiry, whatever their status, and keeps the rest', async () => {
    const requests: [id: string, status: string, expiresAt: string][] = [
      ['dev_a_pending_2d', 'pending', `now() - interval '2 days'`],
      ['dev_a_exchanged_2d', 'exchanged', `now() - interval '2 days'`],
      ['dev_a_denied_2d', 'denied', `now() - interval '2 days'`],
      ['dev_a_pending_1h', 'pending', `now() - interval '1 hour'`],
      ['dev_a_exchanged_1h', 'exchanged', `now() - interval '1 hour'`],
      ['dev_a_live', 'pending', `now() + interval '10 minutes'`],
    ];
    for (const [id, status, expiresAt] of requests)
      await isolation.sql(
        `INSERT INTO auth.device_requests
           (id, device_code_hash, user_code, status, interval_seconds, expires_at)
         VALUES ($1, $1, $1, $2, 5, ${expiresAt})`,
        [id, status],
      );
    await service.get(AuthSweep).sweep();
    assert.deepEqual(await idsOf('device_requests', 'dev_a_'), [
      'dev_a_exchanged_1h',
      'dev_a_live',
      'dev_a_pending_1h',
    ]);
  });

  it('deletes wrong-code records older than the window and keeps recent ones', async () => {
    const ages: [clientIp: string, age: string][] = [
      ['192.0.2.1', '20 minutes'],
      ['192.0.2.1', '1 minute'],
      ['192.0.2.2', '2 days'],
      ['192.0.2.3', '10 seconds'],
    ];
    for (const [clientIp, age] of ages)
      await isolation.sql(
        `INSERT INTO auth.wrong_code_attempts (client_ip, attempted_at)
         VALUES ($1, now() - $2::interval)`,
        [clientIp, age],
      );
    await service.get(AuthSweep).sweep();
    const left = await isolation.sql<{ client_ip: string }>(
      `SELECT client_ip FROM auth.wrong_code_attempts WHERE client_ip LIKE '192.0.2.%'
       ORDER BY client_ip`,
    );
    assert.deepEqual(
      left.map((row) => row.client_ip),
      ['192.0.2.1', '192.0.2.3'],
    );
  });

  it('deletes tokens a day past expiry or revocation and keeps live and recently revoked ones', async () => {
    const tokens: [id: string, expiresAt: string, revokedAt: string][] = [
      ['tok_a_expired_2d', `now() - interval '2 days'`, 'NULL'],
      ['tok_a_revoked_2d', `now() + interval '20 days'`, `now() - interval '2 days'`],
      ['tok_a_expired_1h', `now() - interval '1 hour'`, 'NULL'],
      ['tok_a_revoked_1m', `now() + interval '20 days'`, `now() - interval '1 minute'`],
      ['tok_a_live', `now() + interval '20 days'`, 'NULL'],
    ];
    for (const [id, expiresAt, revokedAt] of tokens)
      await isolation.sql(
        `INSERT INTO auth.access_tokens (id, token_hash, user_id, expires_at, revoked_at)
         VALUES ($1, $1, 'usr_sweep', ${expiresAt}, ${revokedAt})`,
        [id],
      );
    await service.get(AuthSweep).sweep();
    assert.deepEqual(await idsOf('access_tokens', 'tok_a_'), [
      'tok_a_expired_1h',
      'tok_a_live',
      'tok_a_revoked_1m',
    ]);
  });

  it('answers DEVICE_CODE_EXPIRED to a poll soon after expiry, DEVICE_CODE_INVALID once swept', async () => {
    const client = isolation.client('auth');
    const device = await client.call(AUTH_PATTERNS.startDevice, ctx, {
      client_ip: '127.0.0.1',
    });
    const expire = (age: string): Promise<unknown> =>
      isolation.sql(
        `UPDATE auth.device_requests SET expires_at = now() - $1::interval WHERE user_code = $2`,
        [age, device.user_code.replace('-', '')],
      );
    const poll = (): Promise<unknown> =>
      client.call(AUTH_PATTERNS.pollDevice, ctx, { device_code: device.device_code });

    await expire('1 hour');
    await service.get(AuthSweep).sweep();
    await assert.rejects(poll(), { code: 'DEVICE_CODE_EXPIRED' });
    await expire('25 hours');
    await service.get(AuthSweep).sweep();
    await assert.rejects(poll(), { code: 'DEVICE_CODE_INVALID' });
  });

  it('sweeps on its own every AUTH_SWEEP_INTERVAL_SECONDS', async () => {
    await isolation.sql(
      `INSERT INTO auth.wrong_code_attempts (client_ip, attempted_at)
       VALUES ('192.0.2.99', now() - interval '1 day')`,
    );
    await eventually(
      async () => {
        const left = await isolation.sql(
          `SELECT 1 FROM auth.wrong_code_attempts WHERE client_ip = '192.0.2.99'`,
        );
        assert.equal(left.length, 0, 'the old wrong-code record is still there');
      },
      { timeoutMs: 30_000 },
    );
  });
});
