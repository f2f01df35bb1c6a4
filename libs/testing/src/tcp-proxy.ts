import type { AddressInfo, Socket } from 'node:net';
import { createConnection, createServer } from 'node:net';

/**
 * A TCP proxy on a free loopback port to `target`, for tests that take a network path away
 * from a process: cut() drops every connection and refuses new ones (a lost network that
 * says so), freeze() keeps the connections open but drops whatever either side sends
 * (one that goes silent). A connection that closes on one side is closed on the other.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private readonly server: ReturnType<typeof createServer>;
  private cutOff = false;
  private frozen = false;

  private constructor(target: { host: string; port: number }) {
    this.server = createServer((client) => this.accept(client, target));
  }

  /** Starts a proxy to `host`:`port`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** The loopback port the proxy listens on. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `url` (a postgres:// or other URL) with its host and port moved to this proxy. */
  rewrite(url: string): string {
    const moved = new URL(url);
    moved.hostname = '127.0.0.1';
    moved.port = String(this.port);
    return moved.toString();
  }

  /** Connections open through the proxy now. */
  get connections(): number {
    return this.sockets.size / 2;
  }

  /** Drops every connection and refuses new ones, for good. */
  cut(): void {
    this.cutOff = true;
    for (const socket of this.sockets) socket.destroy();
  }

  /** Passes nothing more on any connection, open or new, without closing them. */
  freeze(): void {
    this.frozen = true;
  }

  /** Stops the proxy and drops its connections. */
  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    if (this.cutOff) {
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(from);
      from.on('data', (chunk: Buffer) => {
        if (!this.frozen) to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        this.sockets.delete(from);
        to.destroy();
      });
    }
  }
}
