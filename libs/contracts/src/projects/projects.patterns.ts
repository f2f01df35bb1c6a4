import { EmptyDto, rpc } from '../catalogue.js';
import { CreateProjectDto } from './projects.dto.js';
import { DeleteProjectRequest, ProjectIdRequest } from './projects.messages.js';
import type { Deleted, Project, ProjectDetail, ProjectList, RegionList } from './projects.types.js';

/** Message patterns answered by project-service. */
export const PROJECT_PATTERNS = {
  create: rpc<CreateProjectDto, Project>('projects', 'projects.create', CreateProjectDto),
  list: rpc<EmptyDto, ProjectList>('projects', 'projects.list', EmptyDto),
  get: rpc<ProjectIdRequest, ProjectDetail>('projects', 'projects.get', ProjectIdRequest),
  /** Ownership check for other services (no counts asked). */
  check: rpc<ProjectIdRequest, Project>('projects', 'projects.check', ProjectIdRequest, [
    'database-provisioner',
    'notification-service',
  ]),
  delete: rpc<DeleteProjectRequest, Deleted>('projects', 'projects.delete', DeleteProjectRequest),
  regions: rpc<EmptyDto, RegionList>('projects', 'regions.list', EmptyDto, [
    'api-gateway',
    'database-provisioner',
  ]),
} as const;
