import { IsIn, IsOptional, IsString } from 'class-validator';
import { event } from '../catalogue.js';
import type { ArchiveState } from './pitr.types.js';
import { ARCHIVE_STATES } from './pitr.types.js';

/** Payload of PITR_EVENTS: an archive's health changed (docs/api/pitr.md#archive-health). */
export class ArchiveHealthChanged {
  @IsString()
  database_id!: string;

  @IsString()
  project_id!: string;

  @IsIn(ARCHIVE_STATES)
  state!: ArchiveState;

  @IsOptional()
  @IsString()
  problem?: string;
}

/** Events published by pitr-worker on EVENTS_EXCHANGE. */
export const PITR_EVENTS = {
  /** Nothing new reached the object store for a while, though the primary wrote WAL. */
  archiveStale: event('archive.stale', ArchiveHealthChanged, 'pitr-worker'),
  /** A segment the recovery window needs is missing from the object store, or changed. */
  archiveBroken: event('archive.broken', ArchiveHealthChanged, 'pitr-worker'),
  /** The archive is whole and current again. */
  archiveHealthy: event('archive.healthy', ArchiveHealthChanged, 'pitr-worker'),
} as const;
