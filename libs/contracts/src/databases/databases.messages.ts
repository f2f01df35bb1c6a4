import { IsRef, IsIdOf } from '../message-rules.js';
import { CreateDatabaseDto } from './databases.dto.js';

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
