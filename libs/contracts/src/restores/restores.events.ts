import { IsBoolean, IsIn, IsString } from 'class-validator';
import { event } from '../catalogue.js';

/** How a restore ended. */
export const RESTORE_OUTCOMES = ['completed', 'failed', 'cancelled'] as const;

/** Payload of RESTORE_EVENTS.finished. */
export class RestoreFinished {
  @IsString()
  restore_id!: string;

  /** The database whose data the restore replaced or made. */
  @IsString()
  database_id!: string;

  @IsString()
  project_id!: string;

  /** True when the restore ran on its source's own server (its archive was paused). */
  @IsBoolean()
  in_place!: boolean;

  @IsIn(RESTORE_OUTCOMES)
  status!: (typeof RESTORE_OUTCOMES)[number];
}

/** Events published by database-provisioner about restores on EVENTS_EXCHANGE. */
export const RESTORE_EVENTS = {
  /** A restore completed, failed or was cancelled; an in-place one's server takes writes again. */
  finished: event('restore.finished', RestoreFinished, 'database-provisioner'),
} as const;
