import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureCertificateAuthority, issueServerCertificate } from './certificates.js';
import type { OsUser } from './os-user.js';
import { resolveOsUser } from './os-user.js';

const DAY_MS = 24 * 3600 * 1000;

describe('deployment CA and server certificates (openssl)', () => {
  let scratch: string;
  let osUser: OsUser;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'pgcloud-certs-'));
    osUser = await resolveOsUser(process.env.PG_OS_USER ?? 'postgres');
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('makes the CA once, even for two callers at once, and reuses it', async () => {
    const dir = join(scratch, 'ca');
    const [first, second] = await Promise.all([
      ensureCertificateAuthority(dir),
      ensureCertificateAuthority(dir),
    ]);
    assert.equal(first.pem, second.pem);
    assert.equal((await ensureCertificateAuthority(dir)).pem, first.pem);
    assert.equal((await stat(first.keyPath)).mode & 0o777, 0o600);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    const ca = new X509Certificate(first.pem);
    assert.ok(ca.ca);
    assert.equal(ca.subject, 'CN=pgcloud deployment CA');
  });

  it('issues a server certificate for every name and address, signed by the CA', async () => {
    const ca = await ensureCertificateAuthority(join(scratch, 'ca'));
    const outDir = join(scratch, 'server');
    const issued = await issueServerCertificate(ca, {
      commonName: 'db.example.test',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      outDir,
      osUser,
    });
    const cert = new X509Certificate(await readFile(issued.certPath));
    const caCert = new X509Certificate(ca.pem);
    assert.ok(cert.verify(caCert.publicKey));
    assert.ok(cert.checkIssued(caCert));
    assert.equal(cert.checkHost('db.example.test'), 'db.example.test');
    assert.equal(cert.checkHost('localhost'), 'localhost');
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(cert.checkHost('other.example.test'), undefined);
    const days = (Date.parse(cert.validTo) - Date.now()) / DAY_MS;
    assert.ok(days > 800 && days < 830, `valid for ${days} days`);
    const key = await stat(issued.keyPath);
    assert.equal(key.mode & 0o777, 0o600);
    assert.equal(key.uid, osUser.uid);
  });

  it('refuses names that could smuggle text into the openssl configuration', async () => {
    const ca = await ensureCertificateAuthority(join(scratch, 'ca'));
    for (const commonName of ['a b', 'x\nDNS:evil.test', 'x,DNS:evil.test', '']) {
      await assert.rejects(
        issueServerCertificate(ca, {
          commonName,
          dnsNames: [],
          ipAddresses: [],
          outDir: join(scratch, 'refused'),
          osUser,
        }),
        /not a host name/,
      );
    }
  });
});
