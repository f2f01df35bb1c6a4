import type { DatabaseConfig } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { DatabaseEntity } from '../databases/database.entity.js';
import type { DatabaseMoveFields } from '../databases/database-lifecycle.js';
import type { FenceGrace } from '../storage/storage-limit.js';
import { fitsUnderLimit, storageEdges } from '../storage/storage-limit.js';

const GIB = 1024 ** 3;

/**
 * The size a resize asks for: the parts given, the others as they are; undefined when it
 * is the size the database has already (nothing to do, and no restart).
 */
export function resizedConfig(
  current: DatabaseConfig,
  change: Partial<DatabaseConfig>,
): DatabaseConfig | undefined {
  const config: DatabaseConfig = {
    cpu: change.cpu ?? current.cpu,
    memory: change.memory ?? current.memory,
    storage: change.storage ?? current.storage,
  };
  const same = (['cpu', 'memory', 'storage'] as const).every((key) => config[key] === current[key]);
  return same ? undefined : config;
}

/**
 * Less storage is refused (409 STORAGE_IN_USE) where volumes only grow, and wherever the
 * data would not fit under 90% of the new size (it would be read-only at once).
 */
export function assertStorageFits(
  name: string,
  from: DatabaseConfig,
  to: DatabaseConfig,
  room: { usedBytes: number; shrinksStorage: boolean },
): void {
  if (to.storage >= from.storage) return;
  if (!room.shrinksStorage)
    throw new DomainError(
      'STORAGE_IN_USE',
      `Database ${name} keeps its data on a volume that can only grow: ` +
        `storage can go up from ${from.storage} GiB, not down.`,
    );
  if (!fitsUnderLimit(room.usedBytes, to.storage)) {
    const usedGib = (room.usedBytes / GIB).toFixed(2);
    throw new DomainError(
      'STORAGE_IN_USE',
      `Database ${name} holds ${usedGib} GiB: ${to.storage} GiB of storage would leave it ` +
        'under 10% free. Delete data first, or choose more storage.',
    );
  }
}

/**
 * What a resize does about the storage limit, from what the data takes before it: a fenced
 * server whose data is under the new size's fence edge comes back writable (`unfence`, at
 * the resize's restart); a read-only one whose data is under 90% of the new limit is made
 * writable (`writable`). `fields`: what the database's record then says.
 */
export function storageAfterResize(
  record: Pick<DatabaseEntity, 'config' | 'storageFencedAt' | 'storageFull'>,
  usedBytes: number,
  grace: FenceGrace,
): { unfence: boolean; writable: boolean; fields: DatabaseMoveFields } {
  const { fenceAtBytes } = storageEdges(record.config.storage, grace);
  const unfence = record.storageFencedAt !== null && usedBytes < fenceAtBytes;
  const writable = record.storageFull && fitsUnderLimit(usedBytes, record.config.storage);
  return {
    unfence,
    writable,
    fields: {
      ...(unfence ? { storageFencedAt: null, storageCleanupUntil: null } : {}),
      ...(writable ? { storageFull: false } : {}),
    },
  };
}
