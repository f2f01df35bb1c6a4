import type { DatabaseConfig } from '@pgcloud/contracts';
import type { SettingValue } from '@pgcloud/postgres';

const MIN_SHARED_BUFFERS_MB = 32;

/** temp_file_limit for a storage size: temp files may not outgrow the storage limit. */
export function tempFileLimitKb(storageGib: number): number {
  return Math.floor(storageGib * 1024 * 1024);
}

/**
 * Maps a database's size (docs/api/databases.md) to PostgreSQL settings: memory to shared_buffers
 * (25%) and effective_cache_size (75%), cpu to parallel workers, storage to temp_file_limit. The
 * storage limit itself is watched by the provisioner (storage/storage-limit.ts).
 */
export function sizeSettings(config: DatabaseConfig): Record<string, SettingValue> {
  const memoryMb = Math.floor(config.memory * 1024);
  const parallelWorkers = Math.max(2, Math.ceil(config.cpu));
  const perGather = Math.max(1, Math.floor(config.cpu / 2));
  return {
    shared_buffers: `${Math.max(MIN_SHARED_BUFFERS_MB, Math.floor(memoryMb / 4))}MB`,
    effective_cache_size: `${Math.max(MIN_SHARED_BUFFERS_MB * 3, Math.floor((memoryMb * 3) / 4))}MB`,
    // Two slots beyond the parallel workers: the logical replication launcher and
    // other background workers draw from the same pool.
    max_worker_processes: parallelWorkers + 2,
    max_parallel_workers: parallelWorkers,
    max_parallel_workers_per_gather: perGather,
    max_parallel_maintenance_workers: perGather,
    temp_file_limit: `${tempFileLimitKb(config.storage)}kB`,
  };
}
