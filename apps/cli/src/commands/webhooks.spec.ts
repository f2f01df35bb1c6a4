import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROJECT, route, runCli } from './fake-api.testing.js';
import { eventList, webhookChanges } from './webhooks.js';

const HOOK = 'whk_aaaaaaaaaaaaaaaaaaaa';
const SECRET = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const HOOKS = `/projects/${PROJECT}/webhooks`;

function webhook(extra: Record<string, unknown> = {}) {
  return {
    id: HOOK,
    url: 'https://hooks.example.com/pgcloud',
    events: ['backup.failed', 'drill.failed'],
    enabled: true,
    created_at: '2026-12-01T10:00:00.000Z',
    ...extra,
  };
}

describe('webhooks', () => {
  it('lists the endpoints of the project, with why one was disabled', async (t) => {
    const disabled = webhook({
      id: 'whk_bbbbbbbbbbbbbbbbbbbb',
      enabled: false,
      disabled_reason: 'every delivery failed for 3 days (last: connection refused)',
    });
    const run = await runCli(
      t,
      ['webhooks', 'list'],
      [route('GET', HOOKS, { webhooks: [webhook(), disabled] })],
    );
    assert.equal(run.exitCode, undefined, run.stderr);
    assert.match(
      run.stdout,
      new RegExp(`${HOOK}\\s+https://hooks\\S+\\s+backup.failed,drill.failed`),
    );
    assert.match(run.stdout, /disabled: every delivery failed for 3 days/);
    const quiet = await runCli(
      t,
      ['webhooks', 'list', '-q'],
      [route('GET', HOOKS, { webhooks: [webhook(), disabled] })],
    );
    assert.equal(quiet.stdout, `${HOOK}\nwhk_bbbbbbbbbbbbbbbbbbbb\n`);
  });

  it('creates an endpoint, printing its secret once and saying so', async (t) => {
    const created = { ...webhook({ description: 'pager' }), secret: SECRET };
    const run = await runCli(
      t,
      [
        'webhooks',
        'create',
        'https://hooks.example.com/pgcloud',
        '--events',
        'backup.failed, drill.failed',
        '--description',
        'pager',
      ],
      [route('POST', HOOKS, created)],
    );
    assert.equal(run.exitCode, undefined, run.stderr);
    assert.deepEqual(run.requests[0]?.body, {
      url: 'https://hooks.example.com/pgcloud',
      events: ['backup.failed', 'drill.failed'],
      description: 'pager',
    });
    assert.match(run.stdout, new RegExp(`\\n${SECRET.replace(/[+/]/g, '\\$&')}\\n`));
    assert.match(run.stdout, /description:\s+pager/);
    assert.match(run.stderr, /only time the secret is shown/);
  });

  it('create --quiet prints only the secret; --json the answer, the warning on stderr', async (t) => {
    const created = { ...webhook(), secret: SECRET };
    const quiet = await runCli(
      t,
      ['webhooks', 'create', 'https://h.example', '--events', '*', '-q'],
      [route('POST', HOOKS, created)],
    );
    assert.deepEqual(quiet.requests[0]?.body, { url: 'https://h.example', events: ['*'] });
    assert.equal(quiet.stdout, `${SECRET}\n`);
    assert.equal(quiet.stderr, '');
    const json = await runCli(
      t,
      ['webhooks', 'create', 'https://h.example', '--events', '*', '--json'],
      [route('POST', HOOKS, created)],
    );
    assert.deepEqual(JSON.parse(json.stdout), created);
    assert.match(json.stderr, /only time the secret is shown/);
  });

  it('create needs --events, and refuses an empty list before any request', async (t) => {
    for (const args of [[], ['--events', ' , ']]) {
      const run = await runCli(t, ['webhooks', 'create', 'https://h.example', ...args], []);
      assert.equal(run.exitCode, 2, args.join(' '));
      assert.equal(run.requests.length, 0);
    }
  });

  it('exits 5 on the quota, 2 on a refused value, 4 for an unknown endpoint', async (t) => {
    const error = (status: number, code: string) =>
      new Response(JSON.stringify({ success: false, error: { code, message: code } }), {
        status,
        headers: { 'content-type': 'application/json' },
      });
    const quota = await runCli(
      t,
      ['webhooks', 'create', 'https://h.example', '--events', '*'],
      [route('POST', HOOKS, error(403, 'QUOTA_EXCEEDED'))],
    );
    assert.equal(quota.exitCode, 5);
    const invalid = await runCli(
      t,
      ['webhooks', 'create', 'http://h.example', '--events', 'database.exploded'],
      [route('POST', HOOKS, error(400, 'VALIDATION_ERROR'))],
    );
    assert.equal(invalid.exitCode, 2);
    const missing = await runCli(
      t,
      ['webhooks', 'deliveries', 'whk_nothing'],
      [route('GET', '/whk_nothing/deliveries', error(404, 'WEBHOOK_NOT_FOUND'))],
    );
    assert.equal(missing.exitCode, 4);
    assert.match(missing.stderr, /code WEBHOOK_NOT_FOUND/);
  });

  it('update sends only what the flags change', async (t) => {
    const run = await runCli(
      t,
      ['webhooks', 'update', HOOK, '--events', '*', '--enable'],
      [route('PATCH', `${HOOKS}/${HOOK}`, webhook({ events: ['*'] }))],
    );
    assert.equal(run.exitCode, undefined, run.stderr);
    assert.deepEqual(run.requests[0]?.body, { events: ['*'], enabled: true });
    assert.match(run.stdout, /state:\s+enabled/);
  });

  it('update refuses no change, and --enable with --disable, before any request', async (t) => {
    for (const args of [[], ['--enable', '--disable']]) {
      const run = await runCli(t, ['webhooks', 'update', HOOK, ...args], []);
      assert.equal(run.exitCode, 2, args.join(' '));
      assert.equal(run.requests.length, 0);
    }
  });

  it('deletes an endpoint', async (t) => {
    const run = await runCli(
      t,
      ['webhooks', 'delete', HOOK],
      [route('DELETE', `${HOOKS}/${HOOK}`, { id: HOOK, deleted: true })],
    );
    assert.equal(run.requests[0]?.method, 'DELETE');
    assert.equal(run.stdout, `Deleted webhook endpoint ${HOOK}.\n`);
  });

  it('rotates the secret, printing the new one once and the overlap', async (t) => {
    const run = await runCli(
      t,
      ['webhooks', 'rotate-secret', HOOK],
      [route('POST', `${HOOKS}/${HOOK}/rotate-secret`, { ...webhook(), secret: SECRET })],
    );
    assert.equal(run.requests[0]?.method, 'POST');
    assert.ok(run.stdout.includes(`\n${SECRET}\n`), run.stdout);
    assert.match(run.stderr, /only time the secret is shown/);
    assert.match(run.stderr, /24 hours/);
  });

  it('lists the delivery attempts of an endpoint', async (t) => {
    const deliveries = [
      {
        id: 'dlv_bbbbbbbbbbbbbbbbbbbb',
        event_id: 'msg_aaaaaaaaaaaaaaaaaaaa',
        type: 'backup.failed',
        attempt: 2,
        status_code: 200,
        duration_ms: 84,
        at: '2026-12-01T10:00:05.000Z',
      },
      {
        id: 'dlv_aaaaaaaaaaaaaaaaaaaa',
        event_id: 'msg_aaaaaaaaaaaaaaaaaaaa',
        type: 'backup.failed',
        attempt: 1,
        error: 'timed out after 10 s',
        duration_ms: 10000,
        at: '2026-12-01T10:00:00.000Z',
        next_attempt_at: '2026-12-01T10:00:05.000Z',
      },
    ];
    const run = await runCli(
      t,
      ['webhooks', 'deliveries', HOOK],
      [route('GET', `${HOOKS}/${HOOK}/deliveries`, { deliveries })],
    );
    assert.equal(run.exitCode, undefined, run.stderr);
    assert.match(run.stdout, /backup\.failed\s+msg_a+\s+2\s+200\s+84/);
    assert.match(run.stdout, /1\s+-\s+10000\s+2026-12-01T10:00:05.000Z\s+timed out after 10 s/);
  });
});

describe('webhook flags', () => {
  it('reads --events as names, blanks left out', () => {
    assert.deepEqual(eventList(' drill.failed,,backup.failed '), ['drill.failed', 'backup.failed']);
    assert.throws(() => eventList(','), /at least one event type/);
  });

  it('turns update flags into the PATCH body', () => {
    assert.deepEqual(webhookChanges({ disable: true }), { enabled: false });
    assert.deepEqual(webhookChanges({ description: '' }), { description: '' });
    assert.throws(() => webhookChanges({}), /at least one of/);
  });
});
