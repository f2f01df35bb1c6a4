import 'reflect-metadata';
import type { DynamicModule } from '@nestjs/common';
import { Controller, Get, Inject, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Project } from '@pgcloud/contracts';
import { freePort } from '@pgcloud/testing';
import pg from 'pg';

const POOL = 'BASELINE_POOL';
const OWNER_ID = 'BASELINE_OWNER_ID';

/** The query project-service runs for `projects.list`, written out by hand. */
const LIST_SQL = `
  SELECT id, name, default_region, created_at
    FROM projects.projects
   WHERE owner_id = $1
   ORDER BY created_at, id`;

interface ProjectRow {
  id: string;
  name: string;
  default_region: string;
  created_at: Date;
}

/**
 * `GET /projects` with nothing between HTTP and PostgreSQL. The bearer token is NOT checked
 * and the owner is fixed: the baseline measures the query and the envelope without the
 * broker and without authentication, so the ratio shows what those cost.
 */
@Controller('projects')
class BaselineProjectsController {
  constructor(
    @Inject(POOL) private readonly pool: pg.Pool,
    @Inject(OWNER_ID) private readonly ownerId: string,
  ) {}

  @Get()
  async list(): Promise<{ success: true; data: { projects: Project[] } }> {
    const { rows } = await this.pool.query<ProjectRow>(LIST_SQL, [this.ownerId]);
    const projects = rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }));
    return { success: true, data: { projects } };
  }
}

@Module({})
class BaselineModule {
  static forRoot(pool: pg.Pool, ownerId: string): DynamicModule {
    return {
      module: BaselineModule,
      controllers: [BaselineProjectsController],
      providers: [
        { provide: POOL, useValue: pool },
        { provide: OWNER_ID, useValue: ownerId },
      ],
    };
  }
}

/** A running baseline server. */
export interface Baseline {
  url: string;
  close(): Promise<void>;
}

/** Starts the baseline on a free port of 127.0.0.1, reading the given metadata database. */
export async function startBaseline(databaseUrl: string, ownerId: string): Promise<Baseline> {
  // Ten connections, as TypeORM's default pool in project-service, so neither side
  // gets more database concurrency than the other.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  try {
    const app = await NestFactory.create<NestExpressApplication>(
      BaselineModule.forRoot(pool, ownerId),
      { bodyParser: false, logger: ['error', 'warn'] },
    );
    // The gateway drops this header too; it keeps the two answers' sizes alike.
    app.disable('x-powered-by');
    const port = await freePort();
    await app.listen(port, '127.0.0.1');
    return {
      url: `http://127.0.0.1:${port}`,
      close: async () => {
        await app.close();
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end();
    throw err;
  }
}
