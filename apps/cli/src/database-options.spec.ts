import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommanderError, InvalidArgumentError } from 'commander';
import { createDatabaseBody, parseSize } from './database-options.js';
import { buildProgram } from './program.js';

describe('parseSize', () => {
  it('reads plain decimals', () => {
    assert.equal(parseSize('2'), 2);
    assert.equal(parseSize('0.25'), 0.25);
    assert.equal(parseSize('.5'), 0.5);
    assert.equal(parseSize('1024'), 1024);
  });

  it('refuses anything else, naming the value', () => {
    for (const value of [
      'abc',
      '',
      ' 2',
      '2 ',
      '1e3',
      '0x10',
      'Infinity',
      'NaN',
      '2GB',
      '1.',
      '-1',
    ])
      assert.throws(
        () => parseSize(value),
        (error: unknown) =>
          error instanceof InvalidArgumentError && error.message.includes(`"${value}"`),
        value,
      );
  });
});

describe('createDatabaseBody', () => {
  it('sends no config and no region when no flag is given', () => {
    assert.deepEqual(createDatabaseBody('orders', {}), { name: 'orders' });
  });

  it('sends only the sizes given, leaving the rest to the API', () => {
    assert.deepEqual(createDatabaseBody('orders', { memory: 2 }), {
      name: 'orders',
      config: { memory: 2 },
    });
    assert.deepEqual(createDatabaseBody('orders', { cpu: 0.5, storage: 5, region: 'eu' }), {
      name: 'orders',
      region: 'eu',
      config: { cpu: 0.5, storage: 5 },
    });
  });
});

describe('db create flags', () => {
  it('stops with a usage error before any request when a size is not a number', async (t) => {
    const fetchMock = t.mock.method(globalThis, 'fetch', () =>
      Promise.reject(new Error('no request expected')),
    );
    const stderrMock = t.mock.method(process.stderr, 'write', () => true);
    await assert.rejects(
      buildProgram().parseAsync(['db', 'create', 'orders', '--project', 'shop', '--cpu', 'two'], {
        from: 'user',
      }),
      (error: unknown) =>
        error instanceof CommanderError && error.code === 'commander.invalidArgument',
    );
    const printed = stderrMock.mock.calls.map((call) => String(call.arguments[0])).join('');
    stderrMock.mock.restore();
    assert.equal(fetchMock.mock.callCount(), 0);
    assert.match(printed, /--cpu.*"two" is not a plain positive number/);
  });
});
