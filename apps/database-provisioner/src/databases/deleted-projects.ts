import { DomainError } from '@pgcloud/contracts';
import { queryRows } from '@pgcloud/postgres';
import type { EntityManager } from 'typeorm';

// What the provisioner knows of projects: only those project-service announced deleted
// (project.deleted). A create checks the project over RPC first, and the project may be
// deleted between that check and the insert: the insert and the handler of project.deleted
// take the same per-project lock, so either the insert sees the project's tombstone and
// refuses, or the handler sees the new database and removes it.

/** Makes creates in one project, and the removal of a deleted project's databases, take turns. */
export async function lockProject(manager: EntityManager, projectId: string): Promise<void> {
  await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [projectId]);
}

/** Records that the project is gone; call with its lock held. */
export async function recordProjectDeleted(
  manager: EntityManager,
  projectId: string,
): Promise<void> {
  await manager.query(
    `INSERT INTO provisioner.deleted_projects (project_id) VALUES ($1)
     ON CONFLICT (project_id) DO NOTHING`,
    [projectId],
  );
}

/** PROJECT_NOT_FOUND when project-service announced the project deleted; call with its lock held. */
export async function assertProjectNotDeleted(
  manager: EntityManager,
  projectId: string,
): Promise<void> {
  const rows = await queryRows(
    manager,
    'SELECT 1 FROM provisioner.deleted_projects WHERE project_id = $1',
    [projectId],
  );
  if (rows.length > 0)
    throw new DomainError('PROJECT_NOT_FOUND', `Project ${projectId} was not found.`);
}
