import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ObjectStore } from '@pgcloud/storage';
import { DataSource } from 'typeorm';
import { BackupEntity } from './backup.entity.js';
import { baseBackupPrefix } from './backup-object.js';

/**
 * Removes backups objects first, records after, so no object outlives its record. The
 * record stays locked meanwhile: a backup job finishing at that moment waits, then finds
 * its record gone and removes the object it has just written.
 */
@Injectable()
export class BackupRemoval {
  private readonly logger = new Logger(BackupRemoval.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly store: ObjectStore,
  ) {}

  /** Removes one backup; false when it was already gone. */
  async remove(backupId: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const record = await manager.findOne(BackupEntity, {
        where: { id: backupId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!record) return false;
      await this.store.abortIncompleteUploads(record.objectKey);
      await this.store.delete(record.objectKey);
      await manager.delete(BackupEntity, { id: record.id });
      return true;
    });
  }

  /**
   * Removes every backup of a database, and anything else under its prefix (known from its
   * records, or given); answers how many backups.
   */
  async removeAllOf(databaseId: string, knownProjectId?: string): Promise<number> {
    const records = await this.dataSource
      .getRepository(BackupEntity)
      .find({ select: { id: true, projectId: true }, where: { databaseId } });
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
