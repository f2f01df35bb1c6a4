import type { ApiClient } from '@pgcloud/testing';
import pg from 'pg';
import { expectData } from '../assertions.js';

/**
 * Every resource of a user the API shows, as keys: `project:<id>`,
 * `database:<project id>/<name>`, `backup:<id>`, `restore:<id>`, `webhook:<id>`. Automated backups are left
 * out: the schedule takes them on its own (docs/api/backups.md#automated-backups-and-expiry),
 * whatever the fuzz does.
 */
export async function apiInventory(api: ApiClient): Promise<Set<string>> {
  const keys = new Set<string>();
  const { projects } = expectData<{ projects: { id: string }[] }>(await api.get('/projects'), 200);
  for (const project of projects) {
    keys.add(`project:${project.id}`);
    const { webhooks } = expectData<{ webhooks: { id: string }[] }>(
      await api.get(`/projects/${project.id}/webhooks`),
      200,
    );
    for (const webhook of webhooks) keys.add(`webhook:${webhook.id}`);
    const { databases } = expectData<{ databases: { name: string }[] }>(
      await api.get(`/projects/${project.id}/databases`),
      200,
    );
    for (const database of databases) {
      keys.add(`database:${project.id}/${database.name}`);
      const path = `/projects/${project.id}/databases/${database.name}`;
      const { backups } = expectData<{ backups: { id: string; type: string }[] }>(
        await api.get(`${path}/backups`),
        200,
      );
      for (const backup of backups) if (backup.type === 'manual') keys.add(`backup:${backup.id}`);
      const { restores } = expectData<{ restores: { id: string }[] }>(
        await api.get(`${path}/restores`),
        200,
      );
      for (const restore of restores) keys.add(`restore:${restore.id}`);
    }
  }
  return keys;
}

/** A row of the metadata that belongs to the fuzz's users, and its state. */
export interface MetadataRow {
  key: string;
  status: string;
}

/**
 * The same resources as the metadata holds them, with their states, read from each
 * service's own tables: what the API hides (a row stuck in `provisioning`, `pending` or
 * `deleting`) shows here.
 */
export async function metadataInventory(
  databaseUrl: string,
  userIds: string[],
): Promise<MetadataRow[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<MetadataRow>(
      `SELECT 'project:' || id AS key, 'active' AS status FROM projects.projects WHERE owner_id = ANY($1)
       UNION ALL
       SELECT 'database:' || project_id || '/' || name, status FROM provisioner.databases WHERE owner_id = ANY($1)
       UNION ALL
       SELECT 'backup:' || id, status FROM backups.backups WHERE owner_id = ANY($1) AND type = 'manual'
       UNION ALL
       SELECT 'restore:' || r.id, r.status FROM provisioner.restores r
         JOIN provisioner.databases d ON d.id = r.database_id WHERE d.owner_id = ANY($1)`,
      [userIds],
    );
    return rows;
  } finally {
    await client.end();
  }
}
