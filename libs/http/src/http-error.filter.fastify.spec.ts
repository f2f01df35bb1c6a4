import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import 'reflect-metadata';
import { Controller, Get, Header, Module } from '@nestjs/common';
import { HttpAdapterHost, NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DomainError } from '@pgcloud/contracts';
import { HttpErrorFilter } from './http-error.filter.js';

/** A route that answers another type than JSON when it succeeds, as GET /ca.pem does. */
@Controller('pem')
class PemController {
  @Get()
  @Header('Content-Type', 'application/x-pem-file')
  get(): string {
    throw new DomainError('SERVICE_UNAVAILABLE', 'The CA is not reachable; try again shortly.');
  }
}

@Module({ controllers: [PemController] })
class PemModule {}

describe('HttpErrorFilter on Fastify', () => {
  let app: NestFastifyApplication;

  before(async () => {
    app = await NestFactory.create<NestFastifyApplication>(PemModule, new FastifyAdapter(), {
      logger: false,
    });
    app.useGlobalFilters(new HttpErrorFilter(app.get(HttpAdapterHost)));
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  after(async () => {
    await app?.close();
  });

  it('answers the JSON envelope even where the route set another Content-Type', async () => {
    const res = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/pem' });
    assert.equal(res.statusCode, 503);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(JSON.parse(res.body), {
      success: false,
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'The CA is not reachable; try again shortly.',
      },
    });
  });
});
