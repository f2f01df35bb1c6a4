import { IsRef, IsIdOf } from '../message-rules.js';
import { Type } from 'class-transformer';
import { IsISO8601, IsObject, IsOptional, ValidateNested } from 'class-validator';
import {
  CreateDatabaseDto,
  DatabaseConfigDto,
  IsDatabaseName,
  UpdateDatabaseDto,
} from './databases.dto.js';

/** A project, named in a request for its databases. */
export class ProjectRef {
  @IsRef()
  project_id: string;
}

/** A database, named as the API names it: by project and name. */
export class DatabaseRef extends ProjectRef {
  @IsRef()
  name: string;
}

/** A database, named by its id (between services). */
export class DatabaseIdRef {
  @IsIdOf('db')
  database_id: string;
}

/** databases.create: the HTTP body's rules, and the project it goes to. */
export class CreateDatabaseRequest extends CreateDatabaseDto {
  @IsRef()
  project_id: string;
}

/**
 * pitr.create-restore-point and databases.create-restore-point: a named WAL position of
 * the database (its name is taken by the database's own `name`).
 */
export class RestorePointRequest extends DatabaseRef {
  @IsDatabaseName()
  point_name: string;
}

/** databases.update: the HTTP body's rules, and the database it changes. */
export class UpdateDatabaseRequest extends UpdateDatabaseDto {
  @IsRef()
  project_id: string;

  @IsRef()
  name: string;
}

/**
 * A branch at a past point (docs/api/databases.md#branches), as the provisioner asks for
 * it through pitr-worker: the new database's project, size and expiry, made from the
 * source by the restore with `target_database` its name.
 */
export class RestoreBranchFields {
  @IsRef()
  project_id: string;

  @IsObject()
  @ValidateNested()
  @Type(() => DatabaseConfigDto)
  config: DatabaseConfigDto;

  @IsOptional()
  @IsISO8601({ strict: true })
  expires_at?: string | null;
}
