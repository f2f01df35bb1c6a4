import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { route, runCli } from './fake-api.testing.js';

const DRILL = 'drl_aaaaaaaaaaaaaaaaaaaa';
const inShop = ['--db', 'shop'];

function drill(extra: Record<string, unknown> = {}) {
  return {
    id: DRILL,
    kind: 'manual',
    status: 'pending',
    phase: 'queued',
    backup_id: null,
    checks: [],
    started_at: '2026-11-28T10:00:00.000Z',
    ...extra,
  };
}

describe('drills', () => {
  it('runs a drill and waits for it, printing its checks', async (t) => {
    const passed = drill({
      status: 'passed',
      phase: 'done',
      backup_id: 'bkp_aaaaaaaaaaaaaaaaaaaa',
      restore_seconds: 3.25,
      checks: [{ name: 'amcheck', passed: true, detail: 'no corruption' }],
    });
    const run = await runCli(
      t,
      ['drills', 'run', '--wait', ...inShop],
      [
        route('POST', '/databases/shop/drills', drill()),
        route('GET', `/databases/shop/drills/${DRILL}`, drill({ status: 'running' }), passed),
      ],
    );
    assert.equal(run.exitCode, undefined, run.stderr);
    assert.match(run.stdout, /status:\s+passed/);
    assert.match(run.stdout, /amcheck:\s+passed: no corruption/);
    assert.match(run.stdout, /restore:\s+3\.3 s/);
  });

  it('fails the command when the drill failed, naming the check', async (t) => {
    const failed = drill({
      status: 'failed',
      phase: 'downloading',
      error: 'Check consistent failed: the base backup is not the one archived',
      checks: [
        { name: 'consistent', passed: false, detail: 'the base backup is not the one archived' },
      ],
    });
    const run = await runCli(
      t,
      ['drills', 'run', '--wait', ...inShop],
      [route('POST', '/databases/shop/drills', drill()), route('GET', `/drills/${DRILL}`, failed)],
    );
    assert.equal(run.exitCode, 1);
    assert.match(run.stderr, /drill drl_a+ failed: Check consistent failed/);
    assert.match(run.stderr, /consistent:\s+FAILED/);
  });

  it('lists the drills of a database', async (t) => {
    const run = await runCli(
      t,
      ['drills', 'list', ...inShop],
      [route('GET', '/databases/shop/drills', { drills: [drill({ status: 'passed' })] })],
    );
    assert.match(run.stdout, new RegExp(`${DRILL}\\s+manual\\s+passed`));
  });
});
