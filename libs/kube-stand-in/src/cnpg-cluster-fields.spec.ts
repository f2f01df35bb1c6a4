import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scramSha256Verifier } from '@pgcloud/postgres';
import type { StandInSecret } from './cnpg-cluster-fields.js';
import { basicAuthPassword, secretValue } from './cnpg-cluster-fields.js';
import { storedPassword } from './cnpg-roles.js';

const secrets = new Map<string, StandInSecret>([
  [
    'app',
    {
      data: {
        username: Buffer.from('appdb').toString('base64'),
        password: Buffer.from('s3cret').toString('base64'),
      },
    },
  ],
  ['plain', { stringData: { password: 'written-as-stringData' } }],
]);
const lookup = (name: string) => secrets.get(name);

describe('Secrets as the CNPG stand-in reads them', () => {
  it('decodes base64 data, and reads stringData too', () => {
    assert.equal(secretValue(lookup, 'app', 'password'), 's3cret');
    assert.equal(secretValue(lookup, 'plain', 'password'), 'written-as-stringData');
  });

  it('names the missing Secret or key', () => {
    assert.throws(() => secretValue(lookup, 'nope', 'password'), /Secret 'nope' not found/);
    assert.throws(() => secretValue(lookup, 'app', 'tls.crt'), /Secret 'app' has no key 'tls.crt'/);
  });

  it("refuses a basic-auth Secret whose username is not the role's", () => {
    assert.equal(basicAuthPassword(lookup, 'app', 'appdb'), 's3cret');
    assert.throws(() => basicAuthPassword(lookup, 'app', 'postgres'), /is for 'appdb'/);
  });
});

describe('storedPassword: what ALTER ROLE ... PASSWORD gets', () => {
  it('passes a SCRAM or md5 verifier through and turns plain text into a SCRAM verifier', () => {
    const verifier = scramSha256Verifier('pw');
    assert.equal(storedPassword(verifier), verifier);
    assert.equal(storedPassword('md5' + 'a'.repeat(32)), 'md5' + 'a'.repeat(32));
    const stored = storedPassword('plain text');
    assert.match(stored, /^SCRAM-SHA-256\$4096:/);
    assert.ok(!stored.includes('plain text'));
  });
});
