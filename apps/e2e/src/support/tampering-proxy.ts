import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const HOP_HEADERS = new Set([
  'connection',
  'content-length',
  'content-encoding',
  'keep-alive',
  'transfer-encoding',
  'host',
]);

/**
 * A man in the middle for download tests: it passes every API request on to the gateway,
 * but rewrites each download link so the download comes through it too, and flips one
 * byte in the middle of what the S3 server sends. The link's signature still holds: the
 * proxy asks the S3 server with the link as issued.
 */
export class TamperingProxy {
  /** How many downloads had a byte flipped. */
  tampered = 0;
  private readonly server = createServer((req, res) => {
    this.handle(req, res).catch((error: unknown) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
  });

  private constructor(private readonly apiUrl: string) {}

  static async start(apiUrl: string): Promise<TamperingProxy> {
    const proxy = new TamperingProxy(apiUrl);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (url.pathname === '/s3') {
      const object = await fetch(url.searchParams.get('link') ?? '');
      const body = Buffer.from(await object.arrayBuffer());
      if (object.ok && body.length > 0) {
        body[body.length >> 1] ^= 0xff;
        this.tampered += 1;
      }
      res.writeHead(object.status, { 'content-type': object.headers.get('content-type') ?? '' });
      res.end(body);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.entries(req.headers).filter(
      (entry): entry is [string, string] =>
        typeof entry[1] === 'string' && !HOP_HEADERS.has(entry[0]),
    );
    const answer = await fetch(new URL(url.pathname + url.search, this.apiUrl), {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    let body = Buffer.from(await answer.arrayBuffer());
    if (url.pathname.endsWith('/download') && answer.ok) {
      const parsed = JSON.parse(body.toString()) as { data: { download_url: string } };
      parsed.data.download_url = `${this.url}/s3?link=${encodeURIComponent(parsed.data.download_url)}`;
      body = Buffer.from(JSON.stringify(parsed));
    }
    const passed: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!HOP_HEADERS.has(name)) passed[name] = value;
    });
    res.writeHead(answer.status, passed);
    res.end(body);
  }
}
