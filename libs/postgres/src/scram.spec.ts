import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { scramSha256Verifier } from './scram.js';

function parse(verifier: string): {
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
} {
  const match = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(verifier);
  assert.ok(match, `not a SCRAM verifier: ${verifier}`);
  return {
    iterations: Number(match[1]),
    salt: Buffer.from(match[2], 'base64'),
    storedKey: Buffer.from(match[3], 'base64'),
    serverKey: Buffer.from(match[4], 'base64'),
  };
}

const hmac = (key: Buffer, text: string): Buffer => createHmac('sha256', key).update(text).digest();

describe('scramSha256Verifier', () => {
  it('matches what PostgreSQL 15 stored for CREATE ROLE ... PASSWORD (plain text)', () => {
    // Read from pg_authid after `CREATE ROLE vec PASSWORD 'pencil'` on a PostgreSQL 15 server.
    const stored =
      'SCRAM-SHA-256$4096:6zKQGqVzkekjBmh9e+OPLg==$3NcIMSc822zltTe3x+D2f4DrrelRvvueOCypXanVpdY=:u/MPHewoZhlkTYcKtlVIbHk6g+8y3Yy2MjzxjfjtdR4=';
    const salt = Buffer.from('6zKQGqVzkekjBmh9e+OPLg==', 'base64');
    assert.equal(scramSha256Verifier('pencil', { salt, iterations: 4096 }), stored);
  });

  it("accepts RFC 7677's exchange: the client proof and the server signature check out", () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    const { storedKey, serverKey } = parse(
      scramSha256Verifier('pencil', { salt, iterations: 4096 }),
    );
    const nonce = 'rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';
    const authMessage = [
      'n=user,r=rOprNGfwEbeRWgbNEkqO',
      `r=${nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096`,
      `c=biws,r=${nonce}`,
    ].join(',');
    const proof = Buffer.from('dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=', 'base64');
    // What the server does: ClientKey = proof XOR HMAC(StoredKey, AuthMessage); H(ClientKey) = StoredKey.
    const signature = hmac(storedKey, authMessage);
    const clientKey = Buffer.from(proof.map((byte, i) => byte ^ signature[i]));
    assert.deepEqual(createHash('sha256').update(clientKey).digest(), storedKey);
    assert.equal(
      hmac(serverKey, authMessage).toString('base64'),
      '6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
    );
  });

  it('uses PostgreSQL defaults: 4096 iterations and a fresh 16-byte salt each time', () => {
    const first = parse(scramSha256Verifier('secret'));
    const second = parse(scramSha256Verifier('secret'));
    assert.equal(first.iterations, 4096);
    assert.equal(first.salt.length, 16);
    assert.notDeepEqual(first.salt, second.salt);
    assert.notDeepEqual(first.storedKey, second.storedKey);
  });

  it('applies SASLprep, as PostgreSQL and the clients do', () => {
    const salt = Buffer.alloc(16, 7);
    const nbsp = scramSha256Verifier('a\u00A0b\u00ADc', { salt });
    assert.equal(nbsp, scramSha256Verifier('a bc', { salt }));
    assert.equal(scramSha256Verifier('\uFB01', { salt }), scramSha256Verifier('fi', { salt }));
  });

  it('holds only base64 and the separators, so it is safe inside a quoted literal', () => {
    assert.match(
      scramSha256Verifier("it's"),
      /^SCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/,
    );
  });

  it('refuses a nonsense iteration count', () => {
    assert.throws(() => scramSha256Verifier('x', { iterations: 0 }));
  });
});
