import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CertificateAuthority, OsUser } from '@pgcloud/postgres';
import { ensureCertificateAuthority, issueServerCertificate } from '@pgcloud/postgres';
import { MAX_ANSWER_BYTES, TargetClient } from './target-client.js';

/** The key files belong to this process's user, who runs the receiver. */
const thisUser: OsUser = {
  name: userInfo().username,
  uid: process.getuid?.() ?? 0,
  gid: process.getgid?.() ?? 0,
  switchUser: false,
};

/** How the HTTPS receiver answers each path. */
type Handler = (request: IncomingMessage, response: ServerResponse) => void;

describe('the target client, against an HTTPS receiver on loopback', () => {
  let dir: string;
  let ca: CertificateAuthority;
  let server: Server;
  const handlers = new Map<string, Handler>();
  const seen: string[] = [];
  const url = (path: string, host = 'localhost') =>
    `https://${host}:${(server.address() as AddressInfo).port}${path}`;
  const client = (options: { extraCa?: boolean; timeoutMs?: number } = {}) =>
    new TargetClient({
      timeoutMs: options.timeoutMs ?? 5000,
      allowPrivate: true,
      extraCa: options.extraCa === false ? undefined : ca.pem,
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pgcloud-target-client-'));
    ca = await ensureCertificateAuthority(join(dir, 'ca'));
    const certificate = await issueServerCertificate(ca, {
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
      outDir: join(dir, 'receiver'),
      osUser: thisUser,
    });
    server = createServer({
      key: await readFile(certificate.keyPath),
      cert: await readFile(certificate.certPath),
    });
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      seen.push(`${request.headers.host} ${request.url}`);
      request.resume();
      const handler = handlers.get(request.url ?? '');
      if (handler) handler(request, response);
      else response.writeHead(204).end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });

  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers over TLS to a certificate of a CA in WEBHOOK_CA_FILE, by name and by address', async () => {
    const body = '{"type":"x"}';
    for (const host of ['localhost', '127.0.0.1'])
      assert.deepEqual(await client().post(url('/ok', host), { 'webhook-id': 'msg_1' }, body), {
        statusCode: 204,
      });
    assert.ok(seen.includes(`localhost:${(server.address() as AddressInfo).port} /ok`));
  });

  it('refuses a certificate no trusted CA issued', async () => {
    const outcome = await client({ extraCa: false }).post(url('/untrusted'), {}, '{}');
    assert.equal(outcome.statusCode, undefined);
    assert.match(outcome.error ?? '', /^TLS certificate not trusted \(/);
    assert.ok(!seen.some((line) => line.endsWith('/untrusted')), 'no request was sent');
  });

  it('does not follow a redirect', async () => {
    handlers.set('/moved', (_request, response) =>
      response.writeHead(301, { location: url('/elsewhere') }).end(),
    );
    const outcome = await client().post(url('/moved'), {}, '{}');
    assert.deepEqual(outcome, { statusCode: 301, error: 'a redirect, which is not followed' });
    assert.ok(!seen.some((line) => line.endsWith('/elsewhere')));
  });

  it('gives up an answer that does not come within the timeout', async () => {
    handlers.set('/silent', () => undefined);
    const started = Date.now();
    const outcome = await client({ timeoutMs: 1000 }).post(url('/silent'), {}, '{}');
    assert.deepEqual(outcome, { error: 'timed out after 1 s' });
    assert.ok(Date.now() - started < 2500);
  });

  it('reads no more than 64 KiB of an answer', async () => {
    let written = 0;
    const closed = new Promise<void>((resolve) => {
      handlers.set('/endless', (_request, response) => {
        response.writeHead(200);
        const chunk = Buffer.alloc(16 * 1024, 120);
        const timer = setInterval(() => {
          written += chunk.length;
          response.write(chunk);
        }, 5);
        response.on('close', () => {
          clearInterval(timer);
          resolve();
        });
      });
    });
    const started = Date.now();
    const outcome = await client().post(url('/endless'), {}, '{}');
    assert.deepEqual(outcome, { statusCode: 200 });
    await closed;
    assert.ok(Date.now() - started < 2000, 'dropped at the cap, not at the timeout');
    // What the socket buffers beyond the cap is never read; the connection is dropped.
    assert.ok(written < 64 * MAX_ANSWER_BYTES, `the receiver wrote ${written} bytes`);
  });
});
