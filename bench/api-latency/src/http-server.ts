import type { DynamicModule, NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { freePort } from '@pgcloud/testing';

/**
 * Which HTTP server Nest runs on: Express, Nest's default, or Fastify, the gateway's
 * (apps/api-gateway/src/http/http-server.ts).
 */
export type Platform = 'express' | 'fastify';

/** An HTTP server of the bench's own (a baseline, the floor), in this process. */
export interface BenchServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `module` with NestJS on `platform`, on a free port of 127.0.0.1. `close` stops the
 * server, then runs `release` (what the server used: a pool, a broker client); so does a
 * failed start.
 */
export async function serveOnFreePort(
  module: DynamicModule,
  options: NestApplicationOptions,
  release: () => Promise<void>,
  platform: Platform = 'express',
): Promise<BenchServer> {
  try {
    const app =
      platform === 'fastify'
        ? await NestFactory.create(module, new FastifyAdapter(), options)
        : await expressApp(module, options);
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

async function expressApp(
  module: DynamicModule,
  options: NestApplicationOptions,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, options);
  // The gateway sends neither this header nor an ETag (Fastify makes none): alike answers,
  // alike work.
  app.disable('x-powered-by');
  app.set('etag', false);
  return app;
}
