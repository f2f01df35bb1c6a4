import { Injectable, Logger } from '@nestjs/common';
import { ObjectStore } from '@pgcloud/storage';
import { baseBackupPrefix } from './backup-object.js';
import { BackupsRepository } from './backups.repository.js';

/**
 * Removes backups objects first, records after, so no object outlives its record. The
 * record stays locked meanwhile: a backup job finishing at that moment waits, then finds
 * its record gone and removes the object it has just written.
 */
@Injectable()
export class BackupRemoval {
  private readonly logger = new Logger(BackupRemoval.name);

  constructor(
    private readonly backups: BackupsRepository,
    private readonly store: ObjectStore,
  ) {}

  /** Removes one backup; false when it was already gone. */
  async remove(backupId: string): Promise<boolean> {
    return this.backups.deleteLocked(backupId, async (record) => {
      await this.store.abortIncompleteUploads(record.objectKey);
      await this.store.delete(record.objectKey);
    });
  }

  /**
   * Removes every backup of a database, and anything else under its prefix (known from its
   * records, or given); answers how many backups.
   */
  async removeAllOf(databaseId: string, knownProjectId?: string): Promise<number> {
    const records = await this.backups.listForRemoval(databaseId);
    let removed = 0;
    for (const record of records) if (await this.remove(record.id)) removed++;
    const projectId = records[0]?.projectId ?? knownProjectId;
    if (projectId !== undefined) {
      const prefix = baseBackupPrefix(projectId, databaseId);
      await this.store.abortIncompleteUploads(prefix);
      const strays = await this.store.deletePrefix(prefix);
      if (strays > 0) this.logger.warn(`removed ${strays} stray object(s) under ${prefix}`);
    }
    return removed;
  }
}
