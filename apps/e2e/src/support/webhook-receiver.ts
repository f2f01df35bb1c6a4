import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import type { CertificateAuthority } from '@pgcloud/postgres';
import { ensureCertificateAuthority, issueServerCertificate } from '@pgcloud/postgres';
import { eventually, rememberSecret } from '@pgcloud/testing';

/** One request a receiver took, as it came. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  /** The `type` of the body's JSON. */
  type: string;
  /** When it arrived, in epoch milliseconds. */
  at: number;
}

/** What the receiver does with a request: answer a status, or hold it until released. */
export type Reply = { status: number } | { hold: Promise<number> };

/**
 * A webhook receiver as a customer runs one: HTTPS on loopback with a certificate of a CA
 * the test deployment trusts (WEBHOOK_CA_FILE), keeping every request it takes. `reply`
 * decides each answer; by default 204.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  reply: (request: Received) => Reply = () => ({ status: 204 });

  private constructor(
    private readonly server: Server,
    readonly ca: CertificateAuthority,
  ) {}

  /** Starts a receiver whose certificate the CA in `dir` issues (made there once). */
  static async start(dir: string): Promise<WebhookReceiver> {
    const ca = await ensureCertificateAuthority(join(dir, 'ca'));
    // The receiver is this process: its key stays this process's user's.
    const { username: name, uid, gid } = userInfo();
    const osUser = { name, uid, gid, switchUser: false };
    const certificate = await issueServerCertificate(ca, {
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
      outDir: join(dir, 'receiver'),
      osUser,
    });
    const server = createServer({
      key: await readFile(certificate.keyPath),
      cert: await readFile(certificate.certPath),
    });
    const receiver = new WebhookReceiver(server, ca);
    server.on('request', (request, response) => void receiver.take(request, response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  /** The receiver's URL on `host` (an address or a name that resolves to loopback). */
  url(path = '/hooks', host = '127.0.0.1'): string {
    return `https://${host}:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** The requests of one event type so far. */
  ofType(type: string): Received[] {
    return this.received.filter((request) => request.type === type);
  }

  /** Waits until `count` requests of the type came, and answers them. */
  async waitFor(type: string, count = 1, timeoutMs = 30_000): Promise<Received[]> {
    await eventually(
      () => {
        if (this.ofType(type).length < count)
          throw new Error(`${this.ofType(type).length} of ${count} ${type} deliveries came`);
      },
      { timeoutMs, intervalMs: 100 },
    );
    return this.ofType(type);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }

  private async take(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
    );
    // The log scan at the end looks for every signature too: none may reach a log.
    for (const signature of (headers['webhook-signature'] ?? '').split(' '))
      if (signature.length > 8) rememberSecret(signature.replace(/^v1,/, ''));
    let type = '';
    try {
      type = String((JSON.parse(body) as { type?: unknown }).type);
    } catch {
      type = '(not JSON)';
    }
    const received = { headers, body, type, at: Date.now() };
    this.received.push(received);
    const reply = this.reply(received);
    const status = 'hold' in reply ? await reply.hold.catch(() => 0) : reply.status;
    if (status === 0 || response.destroyed) return void response.destroy();
    response.writeHead(status).end();
  }
}
