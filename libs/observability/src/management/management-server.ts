import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { METRICS_PREFIX, metricsText } from '../metrics/default-metrics.js';
import type { Readiness } from './readiness.service.js';

/** What /readyz answers, at each scrape, for alerts (deploy/monitoring). */
const readyGauge = new Gauge({
  name: `${METRICS_PREFIX}ready`,
  help: '1 while every readiness check of this process passes (/readyz answers 200), else 0.',
});

/** Where the management server listens. */
export interface ManagementAddress {
  /** MANAGEMENT_PORT: 0 serves nothing (see CommonEnv). */
  port: number;
  host: string;
}

/**
 * The operator's port, apart from the public API: no rate limit, no Host check, no token,
 * no envelope. /livez answers while the event loop turns; /readyz runs the readiness
 * checks; /metrics is prom-client's default registry.
 */
export class ManagementServer {
  private readonly logger = new Logger('Management');
  private server: Server | undefined;

  constructor(private readonly readiness: () => Promise<Readiness>) {}

  /** Starts listening; answers the address it listens on. */
  async listen(address: ManagementAddress): Promise<AddressInfo> {
    const server = createServer((req, res) => void this.answer(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, () => resolve());
    });
    const bound = server.address() as AddressInfo;
    this.logger.log(
      `management port: http://${address.host}:${bound.port} (livez, readyz, metrics)`,
    );
    return bound;
  }

  /** Stops listening and ends the probes' kept-alive connections. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://management').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, 405, { status: 'error', message: 'Only GET and HEAD.' });
    }
    try {
      switch (path) {
        case '/livez':
          return send(res, 200, { status: 'ok' });
        case '/readyz': {
          const { ready, body } = await this.readiness();
          return send(res, ready ? 200 : 503, body);
        }
        case '/metrics': {
          readyGauge.set((await this.readiness()).ready ? 1 : 0);
          const { contentType, body } = await metricsText();
          res.writeHead(200, { 'Content-Type': contentType }).end(body);
          return;
        }
        default:
          return send(res, 404, { status: 'error', message: 'GET /livez, /readyz or /metrics.' });
      }
    } catch (err) {
      this.logger.error(`${path} failed: ${err instanceof Error ? err.message : String(err)}`);
      send(res, 500, { status: 'error', message: 'The check itself failed; see the log.' });
    }
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res
    .writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
    .end(JSON.stringify(body));
}
