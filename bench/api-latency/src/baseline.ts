import 'reflect-metadata';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { DynamicModule } from '@nestjs/common';
import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  HttpException,
  Inject,
  Module,
  Param,
  Post,
} from '@nestjs/common';
import type { Project } from '@pgcloud/contracts';
import pg from 'pg';
import { benchPool } from './bench-pool.js';
import type { BenchServer, Platform } from './http-server.js';
import { serveOnFreePort } from './http-server.js';

const POOL = 'BASELINE_POOL';
const OWNER_ID = 'BASELINE_OWNER_ID';
const REGION = 'BASELINE_REGION';

/** The query project-service runs for `projects.list`, written out by hand. */
export const LIST_SQL = `
  SELECT id, name, default_region, created_at
    FROM projects.projects
   WHERE owner_id = $1
   ORDER BY created_at, id`;

/** auth-service's `auth.verify-token`: the live token by its hash, with its user. */
const TOKEN_SQL = `
  SELECT t.id AS token_id, t.expires_at, u.id, u.identity_id, u.login, u.email, u.tier
    FROM auth.access_tokens t JOIN auth.users u ON u.id = t.user_id
   WHERE t.token_hash = $1 AND t.revoked_at IS NULL`;

export interface ProjectRow {
  id: string;
  name: string;
  default_region: string;
  created_at: Date;
}

type Envelope<T> = { success: true; data: T };

function toProject(row: ProjectRow): Project {
  return { ...row, created_at: row.created_at.toISOString() };
}

/**
 * The project routes with nothing between HTTP and PostgreSQL: the statements
 * project-service runs, by hand, on a `pg` pool. `/projects` checks NO token and its owner
 * is fixed, so the ratio shows what authentication and the broker cost;
 * `/token-checked/projects` looks the bearer token up on every request, as auth-service
 * does when the gateway's token cache is cold.
 */
@Controller()
class BaselineProjectsController {
  constructor(
    @Inject(POOL) private readonly pool: pg.Pool,
    @Inject(OWNER_ID) private readonly ownerId: string,
    @Inject(REGION) private readonly region: string,
  ) {}

  @Get('projects')
  async list(): Promise<Envelope<{ projects: Project[] }>> {
    return { success: true, data: { projects: await this.projectsOf(this.ownerId) } };
  }

  @Get('token-checked/projects')
  async listChecked(
    @Headers('authorization') authorization = '',
  ): Promise<Envelope<{ projects: Project[] }>> {
    const token = /^Bearer +(\S+)$/i.exec(authorization)?.[1] ?? '';
    const hash = createHash('sha256').update(token).digest('hex');
    const { rows } = await this.pool.query<{ id: string; expires_at: Date }>(TOKEN_SQL, [hash]);
    const [user] = rows;
    if (!user || user.expires_at.getTime() <= Date.now()) throw new HttpException('', 401);
    return { success: true, data: { projects: await this.projectsOf(user.id) } };
  }

  /** projects.create: the owner's lock, the quota count, the row and its outbox event. */
  @Post('projects')
  @HttpCode(201)
  async create(@Body() body: { name: string }): Promise<Envelope<Project>> {
    const id = `proj_${randomBytes(12).toString('hex')}`;
    await this.transaction(async (client) => {
      await client.query(
        "SELECT pg_advisory_xact_lock(hashtext('projects.per-owner'), hashtext($1))",
        [this.ownerId],
      );
      await client.query('SELECT count(*) FROM projects.projects WHERE owner_id = $1', [
        this.ownerId,
      ]);
      await client.query(
        `INSERT INTO projects.projects (id, owner_id, name, default_region)
         VALUES ($1, $2, $3, $4)`,
        [id, this.ownerId, body.name, this.region],
      );
      await this.outboxEvent(client, 'project.created', id);
    });
    const { rows } = await this.pool.query<ProjectRow>(
      'SELECT id, name, default_region, created_at FROM projects.projects WHERE id = $1',
      [id],
    );
    if (!rows[0]) throw new HttpException('', 500);
    return { success: true, data: toProject(rows[0]) };
  }

  /** projects.delete: the owned project, its database count, the delete and its event. */
  @Delete('projects/:id')
  async delete(@Param('id') id: string): Promise<Envelope<{ id: string; deleted: true }>> {
    const { rows } = await this.pool.query<ProjectRow>(
      'SELECT id FROM projects.projects WHERE id = $1 AND owner_id = $2',
      [id, this.ownerId],
    );
    if (!rows[0]) throw new HttpException('', 404);
    await this.pool.query(
      `SELECT count(*)::int AS count FROM projects.project_databases
        WHERE project_id = $1 AND NOT deleted`,
      [id],
    );
    await this.transaction(async (client) => {
      await client.query('DELETE FROM projects.projects WHERE id = $1 AND owner_id = $2', [
        id,
        this.ownerId,
      ]);
      await this.outboxEvent(client, 'project.deleted', id);
    });
    return { success: true, data: { id, deleted: true } };
  }

  private async projectsOf(ownerId: string): Promise<Project[]> {
    const { rows } = await this.pool.query<ProjectRow>(LIST_SQL, [ownerId]);
    return rows.map(toProject);
  }

  /**
   * The event row project-service writes in the same transaction. Its relay publishes it
   * like any other, so the baseline's events cost the broker what the gateway's do.
   */
  private async outboxEvent(client: pg.PoolClient, event: string, projectId: string) {
    await client.query(
      `INSERT INTO projects.outbox (id, event, payload, request_id) VALUES ($1, $2, $3::jsonb, $4)`,
      [
        randomUUID(),
        event,
        JSON.stringify({ project_id: projectId, owner_id: this.ownerId }),
        'baseline',
      ],
    );
  }

  private async transaction(work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await work(client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  }
}

@Module({})
class BaselineModule {
  static forRoot(pool: pg.Pool, ownerId: string, region: string): DynamicModule {
    return {
      module: BaselineModule,
      controllers: [BaselineProjectsController],
      providers: [
        { provide: POOL, useValue: pool },
        { provide: OWNER_ID, useValue: ownerId },
        { provide: REGION, useValue: region },
      ],
    };
  }
}

/**
 * Starts the baseline on a free port of 127.0.0.1, on the given metadata database, for
 * one owner whose new projects go to `region`; on Express unless `platform` says.
 */
export function startBaseline(
  databaseUrl: string,
  ownerId: string,
  region: string,
  platform: Platform = 'express',
): Promise<BenchServer> {
  const pool = benchPool(databaseUrl);
  return serveOnFreePort(
    BaselineModule.forRoot(pool, ownerId, region),
    { logger: ['error', 'warn'] },
    async () => {
      // Requests the last run left in flight finish on the pool first.
      await delay(500);
      await pool.end();
    },
    platform,
  );
}
