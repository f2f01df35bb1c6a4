import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import { buildProgram } from '../program.js';

const PROJECT = 'proj_k3v9x0q2m8t4b7w1c5zd';

function database(status: string, error?: string) {
  return {
    id: 'db_aaaaaaaaaaaaaaaaaaaa',
    project_id: PROJECT,
    name: 'orders',
    platform_service_id: 'srv_aaaaaaaaaaaaaaaaaaaa',
    region: 'local',
    status,
    config: { cpu: 1, memory: 1, storage: 10 },
    created_at: '2026-01-01T00:00:00.000Z',
    ...(error ? { error } : {}),
  };
}

/** Runs `pgcloud ARGS` against a fake API answering each request with the next of `answers`. */
async function run(t: TestContext, args: string[], answers: unknown[]) {
  const requests: { method: string; url: string; body: unknown }[] = [];
  t.mock.method(globalThis, 'fetch', async (request: Request) => {
    const text = await request.text();
    requests.push({ method: request.method, url: request.url, body: text && JSON.parse(text) });
    const data = answers.shift();
    return new Response(JSON.stringify({ success: true, data }), {
      status: request.method === 'POST' ? 201 : 200,
      headers: { 'content-type': 'application/json' },
    });
  });
  const stdout = t.mock.method(process.stdout, 'write', () => true);
  const stderr = t.mock.method(process.stderr, 'write', () => true);
  process.env['PGCLOUD_TOKEN'] = 't';
  try {
    await buildProgram().parseAsync(
      [...args, '--project', PROJECT, '--api-url', 'http://api.test'],
      {
        from: 'user',
      },
    );
  } finally {
    delete process.env['PGCLOUD_TOKEN'];
  }
  const text = (mock: typeof stdout) =>
    mock.mock.calls.map((call) => String(call.arguments[0])).join('');
  const printed = { stdout: text(stdout), stderr: text(stderr) };
  stdout.mock.restore();
  stderr.mock.restore();
  return { requests, ...printed, exitCode: process.exitCode };
}

describe('db create --wait', () => {
  afterEach(() => {
    process.exitCode = undefined;
  });

  it('sends only the sizes given and prints the running database with --json', async (t) => {
    const result = await run(
      t,
      ['db', 'create', 'orders', '--memory', '2', '--wait', '--json'],
      [database('provisioning'), database('running')],
    );
    assert.equal(result.exitCode, undefined);
    assert.deepEqual(result.requests[0]?.body, { name: 'orders', config: { memory: 2 } });
    assert.equal(result.requests[1]?.method, 'GET');
    assert.match(result.requests[1]?.url ?? '', /\/databases\/orders$/);
    assert.deepEqual(JSON.parse(result.stdout), database('running'));
  });

  it('stops at failed, printing the reason and exiting 1', async (t) => {
    const result = await run(
      t,
      ['db', 'create', 'orders', '--wait'],
      [database('provisioning'), database('failed', 'initdb ran out of disk')],
    );
    assert.equal(result.exitCode, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /database orders failed: initdb ran out of disk/);
  });
});
