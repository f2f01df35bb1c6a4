/** Message patterns answered by project-service. */
export const PROJECT_PATTERNS = {
  /** CreateProjectDto -> Project. */
  create: 'projects.create',
  /** {} -> {projects: Project[]}. */
  list: 'projects.list',
  /** ProjectIdRequest -> ProjectDetail. */
  get: 'projects.get',
  /** ProjectIdRequest -> Project: ownership check for other services (no counts asked). */
  check: 'projects.check',
  /** DeleteProjectRequest -> Deleted. */
  delete: 'projects.delete',
  /** {} -> {regions: Region[]}. */
  regions: 'regions.list',
} as const;
