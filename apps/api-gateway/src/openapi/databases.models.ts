import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type {
  ConnectionDetails,
  Database,
  DatabaseConfig,
  DatabaseStatus,
  DatabaseStorage,
  StorageState,
} from '@pgcloud/contracts';
import { DATABASE_STATUSES, STORAGE_STATES } from '@pgcloud/contracts';

/** A server's size. */
@ApiSchema({ name: 'DatabaseConfig' })
export class DatabaseConfigModel implements DatabaseConfig {
  @ApiProperty({ example: 1, description: 'vCPUs, 0.25-16 (Free: at most 1).' })
  cpu: number;

  @ApiProperty({ example: 1, description: 'GiB of memory, 0.25-64 (Free: at most 2).' })
  memory: number;

  @ApiProperty({ example: 10, description: 'GiB of storage, 1-1024 (Free: at most 10).' })
  storage: number;
}

/** What the server takes against its storage limit (docs/api/databases.md#storage). */
@ApiSchema({ name: 'DatabaseStorage' })
export class DatabaseStorageModel implements DatabaseStorage {
  @ApiProperty({
    type: 'integer',
    example: 52_428_800,
    description: 'Bytes its databases take, as last measured (each reconcile pass).',
  })
  used_bytes: number;

  @ApiProperty({
    type: 'integer',
    example: 10_737_418_240,
    description: '`config.storage` in bytes.',
  })
  limit_bytes: number;

  @ApiProperty({
    enum: STORAGE_STATES,
    description:
      '`read_only` at the limit: new transactions are read-only, an explicit `BEGIN READ WRITE` still works. `fenced` past the limit by the grace: no write of any kind, until a restore brings the data under or the database is deleted.',
  })
  state: StorageState;

  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'While a cleanup window lifts the fence (POST .../storage/cleanup): when it closes.',
  })
  cleanup_until?: string;
}

/** A database as the API shows it. */
@ApiSchema({ name: 'Database' })
export class DatabaseModel implements Database {
  @ApiProperty({ example: 'db_k3v9x0q2m8t4b7w1c5zd', pattern: '^db_[0-9a-z]{20}$' })
  id: string;

  @ApiProperty({ example: 'proj_k3v9x0q2m8t4b7w1c5zd' })
  project_id: string;

  @ApiProperty({ example: 'orders' })
  name: string;

  @ApiProperty({ example: 'srv_k3v9x0q2m8t4b7w1c5zd', description: 'The server that runs it.' })
  platform_service_id: string;

  @ApiProperty({ example: 'local' })
  region: string;

  @ApiProperty({ enum: DATABASE_STATUSES })
  status: DatabaseStatus;

  @ApiProperty({ type: DatabaseConfigModel })
  config: DatabaseConfigModel;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiPropertyOptional({ description: 'Why it failed, when it did.' })
  error?: string;

  @ApiProperty({ type: DatabaseStorageModel })
  storage: DatabaseStorageModel;
}

/** GET /projects/{project_id}/databases. */
@ApiSchema({ name: 'DatabaseList' })
export class DatabaseListModel {
  @ApiProperty({ type: [DatabaseModel] })
  databases: DatabaseModel[];
}

/** GET .../databases/{name}/url. */
@ApiSchema({ name: 'ConnectionDetails' })
export class ConnectionDetailsModel implements ConnectionDetails {
  @ApiProperty({ example: '127.0.0.1' })
  host: string;

  @ApiProperty({ type: 'integer', example: 20000 })
  port: number;

  @ApiProperty({ example: 'orders' })
  database: string;

  @ApiProperty({ example: 'orders' })
  user: string;

  @ApiProperty({
    example: 'postgresql://orders:<PASSWORD>@127.0.0.1:20000/orders?sslmode=require',
    description: 'Verify the server with the CA from GET /ca.pem.',
  })
  connection_string: string;
}
