import type { DynamicModule, NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { freePort } from '@pgcloud/testing';

/** An HTTP server of the bench's own (a baseline, the floor), in this process. */
export interface BenchServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `module` with NestJS on a free port of 127.0.0.1. `close` stops the server, then
 * runs `release` (what the server used: a pool, a broker client); so does a failed start.
 */
export async function serveOnFreePort(
  module: DynamicModule,
  options: NestApplicationOptions,
  release: () => Promise<void>,
): Promise<BenchServer> {
  try {
    const app = await NestFactory.create<NestExpressApplication>(module, options);
    // The gateway drops this header and computes no ETag either: alike answers, alike work.
    app.disable('x-powered-by');
    app.set('etag', false);
    const port = await freePort();
    await app.listen(port, '127.0.0.1');
    return {
      url: `http://127.0.0.1:${port}`,
      close: async () => {
        await app.close();
        await release();
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}
