// The floor of the gateway's shape: HTTP in one NestJS process (on Fastify, as the gateway),
// the broker, and the query in another, with nothing else. `node floor.js <DATABASE_URL>
// <RABBITMQ_URL> <queue>` runs the second process; startFloor runs the first and starts the
// second.
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { DynamicModule } from '@nestjs/common';
import { Controller, Get, Inject, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
// The floor is Nest's transport without pgcloud's layers over it (RpcClient, @Handles).
// eslint-disable-next-line no-restricted-imports
import type { ClientProxy } from '@nestjs/microservices';
// eslint-disable-next-line no-restricted-imports
import { ClientProxyFactory, MessagePattern, Payload, Transport } from '@nestjs/microservices';
import type { RmqOptions } from '@nestjs/microservices';
import type { Project } from '@pgcloud/contracts';
import pg from 'pg';
import { firstValueFrom } from 'rxjs';
import { LIST_SQL, type ProjectRow } from './baseline.js';
import { benchPool } from './bench-pool.js';
import type { BenchServer } from './http-server.js';
import { serveOnFreePort } from './http-server.js';

const CLIENT = 'FLOOR_CLIENT';
const OWNER_ID = 'FLOOR_OWNER_ID';
const POOL = 'FLOOR_POOL';
const READY = 'floor service ready';

/**
 * Nest's RMQ transport as pgcloud sets it up (a durable queue, transient messages, no
 * Nagle delay), acknowledged on delivery: there is no ack after the answer here, nor
 * validation, deadlines, request context, metrics, tokens or rate limits.
 */
function rmqOptions(url: string, queue: string, server: boolean): RmqOptions {
  return {
    transport: Transport.RMQ,
    options: {
      urls: [url],
      queue,
      queueOptions: { durable: false, autoDelete: true },
      persistent: false,
      ...(server ? { noAck: true, prefetchCount: 50 } : {}),
      socketOptions: { connectionOptions: { noDelay: true } },
    },
  };
}

@Controller()
class FloorServiceController {
  constructor(@Inject(POOL) private readonly pool: pg.Pool) {}

  @MessagePattern('projects.list')
  async list(@Payload() ownerId: string): Promise<{ projects: Project[] }> {
    const { rows } = await this.pool.query<ProjectRow>(LIST_SQL, [ownerId]);
    return {
      projects: rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() })),
    };
  }
}

@Controller('projects')
class FloorHttpController {
  constructor(
    @Inject(CLIENT) private readonly client: ClientProxy,
    @Inject(OWNER_ID) private readonly ownerId: string,
  ) {}

  @Get()
  async list(): Promise<{ success: true; data: { projects: Project[] } }> {
    const data = await firstValueFrom(
      this.client.send<{ projects: Project[] }>('projects.list', this.ownerId),
    );
    return { success: true, data };
  }
}

@Module({})
class FloorModule {
  static service(pool: pg.Pool): DynamicModule {
    return {
      module: FloorModule,
      controllers: [FloorServiceController],
      providers: [{ provide: POOL, useValue: pool }],
    };
  }

  static http(client: ClientProxy, ownerId: string): DynamicModule {
    return {
      module: FloorModule,
      controllers: [FloorHttpController],
      providers: [
        { provide: CLIENT, useValue: client },
        { provide: OWNER_ID, useValue: ownerId },
      ],
    };
  }
}

/** Starts the floor's service process and its HTTP side on a free port of 127.0.0.1. */
export async function startFloor(
  databaseUrl: string,
  rabbitmqUrl: string,
  ownerId: string,
): Promise<BenchServer> {
  const queue = `pgcloud-bench-floor-${process.pid}`;
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), databaseUrl, rabbitmqUrl, queue],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const stopChild = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  };
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the floor service exited (${code})`)));
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes(READY)) resolve();
      });
    });
  } catch (err) {
    await stopChild();
    throw err;
  }
  const client = ClientProxyFactory.create(rmqOptions(rabbitmqUrl, queue, false));
  return serveOnFreePort(
    FloorModule.http(client, ownerId),
    { bodyParser: false, logger: ['error', 'warn'] },
    async () => {
      await client.close();
      await stopChild();
    },
    'fastify',
  );
}

async function serve(databaseUrl: string, rabbitmqUrl: string, queue: string): Promise<void> {
  const pool = benchPool(databaseUrl);
  const app = await NestFactory.createMicroservice(FloorModule.service(pool), {
    ...rmqOptions(rabbitmqUrl, queue, true),
    logger: ['error', 'warn'],
  });
  await app.listen();
  process.once('SIGTERM', () => {
    void app
      .close()
      .then(() => pool.end())
      .finally(() => process.exit(0));
  });
  console.log(READY);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [databaseUrl = '', rabbitmqUrl = '', queue = ''] = process.argv.slice(2);
  await serve(databaseUrl, rabbitmqUrl, queue);
}
