import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestMicroservice } from '@nestjs/common';
import type { DeviceAuthorization, RequestContext, DomainError } from '@pgcloud/contracts';
import { AUTH_PATTERNS } from '@pgcloud/contracts';
import { startService } from '@pgcloud/messaging';
import { Isolation } from '@pgcloud/devstack';
import { AppModule } from '../app.module.js';
import { loadConfig } from '../config.js';
import { sha256 } from './codes.js';

const ctx: RequestContext = { requestId: 'int-auth' };

describe('auth-service over RabbitMQ and PostgreSQL', () => {
  const isolation = Isolation.create({
    DEVICE_POLL_INTERVAL_SECONDS: '1',
    DEVICE_WRONG_CODE_LIMIT: '10',
    DEVICE_WRONG_CODE_WINDOW_SECONDS: '900',
  });
  const config = loadConfig({ ...process.env, ...isolation.envOf('auth-service') });
  let service: INestMicroservice;

  before(async () => {
    await isolation.brokerLogins();
    service = await startService(AppModule.forRoot(config), 'auth', config);
  });

  after(async () => {
    await service?.close();
    await isolation.cleanup();
  });

  async function approvedDevice(login: string): Promise<DeviceAuthorization> {
    const client = isolation.client('auth');
    const device = await client.call(AUTH_PATTERNS.startDevice, ctx, {
      client_ip: '127.0.0.1',
    });
    await client.call(AUTH_PATTERNS.verifyDevice, ctx, {
      user_code: device.user_code,
      login,
      action: 'approve',
      client_ip: '127.0.0.1',
    });
    return device;
  }

  it('exchanges an approved device code for exactly one token under concurrent polls', async () => {
    const device = await approvedDevice('racer');
    const client = isolation.client('auth');
    const polls = await Promise.allSettled(
      Array.from({ length: 5 }, () =>
        client.call(AUTH_PATTERNS.pollDevice, ctx, {
          device_code: device.device_code,
        }),
      ),
    );
    const tokens = polls.flatMap((p) =>
      p.status === 'fulfilled' && 'access_token' in p.value ? [p.value.access_token] : [],
    );
    assert.equal(tokens.length, 1, JSON.stringify(polls));
    for (const poll of polls) {
      if (poll.status === 'rejected')
        assert.equal((poll.reason as DomainError).code, 'DEVICE_CODE_INVALID');
      else if (!('access_token' in poll.value)) assert.equal(poll.value.status, 'slow_down');
    }
  });

  it('stores only hashes of device codes and tokens', async () => {
    const device = await approvedDevice('hasher');
    const answer = await isolation
      .client('auth')
      .call(AUTH_PATTERNS.pollDevice, ctx, { device_code: device.device_code });
    assert.ok('access_token' in answer);
    const token = answer.access_token;
    const dump =
      JSON.stringify(await isolation.sql('SELECT * FROM auth.access_tokens')) +
      JSON.stringify(await isolation.sql('SELECT * FROM auth.device_requests'));
    assert.ok(!dump.includes(token), 'the plain token is stored nowhere');
    assert.ok(!dump.includes(device.device_code), 'the plain device code is stored nowhere');
    assert.ok(dump.includes(sha256(token)));
    assert.ok(dump.includes(sha256(device.device_code)));
  });

  it('refuses expired and revoked tokens', async () => {
    const client = isolation.client('auth');
    const device = await approvedDevice('expiring');
    const answer = await client.call(AUTH_PATTERNS.pollDevice, ctx, {
      device_code: device.device_code,
    });
    assert.ok('access_token' in answer);
    const user = await client.call(AUTH_PATTERNS.verifyToken, ctx, {
      token: answer.access_token,
    });
    const [stored] = await isolation.sql<{ id: string; identity_id: string; email: string }>(
      `SELECT u.id, u.identity_id, u.email FROM auth.users u
         JOIN auth.access_tokens t ON t.user_id = u.id WHERE u.login = 'expiring'`,
    );
    assert.ok(stored);
    assert.deepEqual(user, {
      id: stored.id,
      identity_id: Number(stored.identity_id),
      login: 'expiring',
      email: stored.email,
      tier: 'free',
      token_id: user.token_id,
    });
    assert.match(user.token_id, /^tok_/);

    await isolation.sql(
      `UPDATE auth.access_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [user.token_id],
    );
    await assert.rejects(
      client.call(AUTH_PATTERNS.verifyToken, ctx, { token: answer.access_token }),
      { code: 'AUTH_REQUIRED' },
    );

    await isolation.sql(
      `UPDATE auth.access_tokens SET expires_at = now() + interval '1 day' WHERE id = $1`,
      [user.token_id],
    );
    await client.call(AUTH_PATTERNS.verifyToken, ctx, { token: answer.access_token });
    await client.call(
      AUTH_PATTERNS.logout,
      { ...ctx, userId: user.id },
      { token_id: user.token_id },
    );
    await assert.rejects(
      client.call(AUTH_PATTERNS.verifyToken, ctx, { token: answer.access_token }),
      { code: 'AUTH_REQUIRED' },
    );
  });

  it('holds the wrong-code limit under parallel wrong codes, then refuses the rest of the window', async () => {
    const clientIp = '203.0.113.30';
    const client = isolation.client('auth', 30_000);
    const attempts = await Promise.allSettled(
      Array.from({ length: 30 }, () =>
        client.call(AUTH_PATTERNS.verifyDevice, ctx, {
          user_code: 'BBBB-BBBB',
          login: 'guesser',
          action: 'approve',
          client_ip: clientIp,
        }),
      ),
    );
    const codes = attempts.map((a) =>
      a.status === 'rejected' ? (a.reason as DomainError).code : 'accepted',
    );
    const count = (code: string): number => codes.filter((c) => c === code).length;
    assert.equal(count('DEVICE_CODE_INVALID'), 10, JSON.stringify(codes));
    assert.equal(count('RATE_LIMIT_EXCEEDED'), 20, JSON.stringify(codes));
    const [recorded] = await isolation.sql<{ n: string }>(
      'SELECT count(*) AS n FROM auth.wrong_code_attempts WHERE client_ip = $1',
      [clientIp],
    );
    assert.equal(Number(recorded?.n), 10);

    // The window is closed to that address, even for a code that is right.
    const device = await client.call(AUTH_PATTERNS.startDevice, ctx, {
      client_ip: clientIp,
    });
    await assert.rejects(
      client.call(AUTH_PATTERNS.verifyDevice, ctx, {
        user_code: device.user_code,
        login: 'guesser',
        action: 'approve',
        client_ip: clientIp,
      }),
      { code: 'RATE_LIMIT_EXCEEDED' },
    );
  });
});
