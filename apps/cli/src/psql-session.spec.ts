import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { CliError, EXIT } from './exit-codes.js';
import { psqlInvocation, runPsql, withCaFile } from './psql-session.js';

describe('psqlInvocation', () => {
  const invocation = psqlInvocation({
    connectionString: 'postgresql://orders:p%40ss%2Fw@db.example.com:5433/orders?sslmode=require',
    caFile: '/tmp/ca.pem',
    extraArgs: ['-c', 'select 1'],
    env: { PATH: '/bin', PGSSLMODE: 'disable' },
  });

  it('verifies the server against the CA file, whatever the string or environment said', () => {
    assert.equal(invocation.command, 'psql');
    assert.equal(invocation.env['PGSSLMODE'], 'verify-full');
    assert.equal(invocation.env['PGSSLROOTCERT'], '/tmp/ca.pem');
    const url = new URL(invocation.args[1] ?? '');
    assert.equal(url.searchParams.getAll('sslmode').join(), 'verify-full');
    assert.equal(url.host, 'db.example.com:5433');
    assert.equal(url.username, 'orders');
    assert.equal(url.pathname, '/orders');
  });

  it('keeps the password off the command line, in PGPASSWORD, decoded', () => {
    assert.equal(invocation.env['PGPASSWORD'], 'p@ss/w');
    assert.ok(invocation.args.every((arg) => !arg.includes('p%40ss') && !arg.includes('p@ss')));
  });

  it('passes the extra arguments after the connection, and the rest of the environment', () => {
    assert.deepEqual(invocation.args.slice(0, 1), ['--dbname']);
    assert.deepEqual(invocation.args.slice(2), ['-c', 'select 1']);
    assert.equal(invocation.env['PATH'], '/bin');
  });

  it('adds sslmode when the string has none', () => {
    const plain = psqlInvocation({
      connectionString: 'postgresql://u:p@h:1/d',
      caFile: 'ca',
      extraArgs: [],
      env: {},
    });
    assert.equal(plain.args[1], 'postgresql://u@h:1/d?sslmode=verify-full');
  });
});

describe('withCaFile', () => {
  it('writes the CA for the owner only and removes it afterwards, even on failure', async () => {
    let seen = '';
    await assert.rejects(
      withCaFile('-----BEGIN CERTIFICATE-----\n', (path) => {
        seen = path;
        assert.equal(readFileSync(path, 'utf8'), '-----BEGIN CERTIFICATE-----\n');
        assert.equal(statSync(path).mode & 0o777, 0o600);
        assert.equal(statSync(dirname(path)).mode & 0o777, 0o700);
        return Promise.reject(new Error('psql failed'));
      }),
      /psql failed/,
    );
    assert.equal(existsSync(dirname(seen)), false);
  });
});

describe('runPsql', () => {
  it("answers the program's exit code", async () => {
    const code = await runPsql({
      command: process.execPath,
      args: ['-e', 'process.exit(7)'],
      env: {},
    });
    assert.equal(code, 7);
  });

  it('says how to install psql when it is missing (exit 1)', async () => {
    await assert.rejects(
      runPsql({ command: 'pgcloud-no-such-psql', args: [], env: { PATH: '/nonexistent' } }),
      (error: unknown) =>
        error instanceof CliError &&
        error.exitCode === EXIT.error &&
        error.code === 'PSQL_NOT_FOUND' &&
        error.message.includes('install'),
    );
  });
});
