import { EmptyDto, rpc } from '../catalogue.js';
import { CreateProjectDto } from './projects.dto.js';
import { DeleteProjectRequest, ProjectIdRequest } from './projects.messages.js';
import type { Deleted, Project, ProjectDetail, Region } from './projects.types.js';

/** Message patterns answered by project-service. */
export const PROJECT_PATTERNS = {
  create: rpc<CreateProjectDto, Project>('projects', 'projects.create', CreateProjectDto),
  list: rpc<EmptyDto, { projects: Project[] }>('projects', 'projects.list', EmptyDto),
  get: rpc<ProjectIdRequest, ProjectDetail>('projects', 'projects.get', ProjectIdRequest),
  /** Ownership check for other services (no counts asked). */
  check: rpc<ProjectIdRequest, Project>('projects', 'projects.check', ProjectIdRequest, [
    'database-provisioner',
  ]),
  delete: rpc<DeleteProjectRequest, Deleted>('projects', 'projects.delete', DeleteProjectRequest),
  regions: rpc<EmptyDto, { regions: Region[] }>('projects', 'regions.list', EmptyDto, [
    'api-gateway',
    'database-provisioner',
  ]),
} as const;
