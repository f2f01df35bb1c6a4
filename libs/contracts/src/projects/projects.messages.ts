import { IsBoolean, IsOptional } from 'class-validator';
import { IsRef } from '../message-rules.js';

/** projects.get and projects.check: a project id as the path gave it. */
export class ProjectIdRequest {
  @IsRef()
  id: string;
}

/** projects.delete. */
export class DeleteProjectRequest extends ProjectIdRequest {
  @IsOptional()
  @IsBoolean()
  force?: boolean;
}
