import { IsRef, IsIdOf } from '../message-rules.js';
import { CreateDatabaseDto, IsDatabaseName } from './databases.dto.js';

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
