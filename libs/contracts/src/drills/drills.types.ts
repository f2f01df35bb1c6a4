import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { idSchema } from '../ids.js';

/** Where a drill is in its life (docs/api/drills.md#a-drill). */
export const DRILL_STATUSES = ['pending', 'running', 'passed', 'failed'] as const;
export type DrillStatus = (typeof DRILL_STATUSES)[number];

/** Who asked for it: the schedule of the database's tier, or its owner. */
export const DRILL_KINDS = ['automated', 'manual'] as const;
export type DrillKind = (typeof DRILL_KINDS)[number];

/** Where a drill's work is, in order; a failed drill keeps the phase it failed in. */
export const DRILL_PHASES = ['queued', 'downloading', 'replaying', 'checking', 'done'] as const;
export type DrillPhase = (typeof DRILL_PHASES)[number];

/** What a drill checks of the data it restored (docs/api/drills.md#checks). */
export const DRILL_CHECK_NAMES = ['consistent', 'amcheck', 'target_reached', 'wal_chain'] as const;
export type DrillCheckName = (typeof DRILL_CHECK_NAMES)[number];

/** One check of a drill and what it found. */
export class DrillCheck {
  @ApiProperty({ enum: DRILL_CHECK_NAMES })
  name: DrillCheckName;

  @ApiProperty()
  passed: boolean;

  @ApiProperty({
    example: 'pg_amcheck checked 3 databases: no corruption',
    description: 'What was found, in words.',
  })
  detail: string;
}

/**
 * A restore drill: the database's newest backup (and, with PITR, its archive to a recent
 * point) restored into a scratch server no client can reach, checked, and removed.
 */
export class Drill {
  @ApiProperty(idSchema('drl'))
  id: string;

  @ApiProperty({ enum: DRILL_KINDS })
  kind: DrillKind;

  @ApiProperty({ enum: DRILL_STATUSES })
  status: DrillStatus;

  @ApiProperty({
    enum: DRILL_PHASES,
    description: 'Where its work is, in this order; a failed drill keeps the phase it failed in.',
  })
  phase: DrillPhase;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'bkp_k3v9x0q2m8t4b7w1c5zd',
    description: 'The backup it restored; null until it has chosen one.',
  })
  backup_id: string | null;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'With PITR: the moment replay went to.',
  })
  target_time?: string;

  @ApiPropertyOptional({
    example: '0/3000148',
    description: 'With PITR: where replay ended, once it has.',
  })
  target_lsn?: string;

  @ApiProperty({ type: [DrillCheck], description: 'The checks run so far, in order.' })
  checks: DrillCheck[];

  @ApiPropertyOptional({
    type: Number,
    example: 12.4,
    description: 'Seconds the restore took, download to a checked login.',
  })
  restore_seconds?: number;

  @ApiProperty({ format: 'date-time' })
  started_at: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Once it passed or failed.' })
  completed_at?: string;

  @ApiPropertyOptional({ description: 'Why it failed, when it did.' })
  error?: string;
}

/** GET .../drills. */
export class DrillList {
  @ApiProperty({ type: [Drill], description: 'Newest first.' })
  drills: Drill[];
}

/** The database's last passed drill: when it was last proven restorable, and from what. */
export class ProvenRestorable {
  @ApiProperty({ format: 'date-time', description: 'When the drill passed.' })
  at: string;

  @ApiProperty(idSchema('drl'))
  drill_id: string;

  @ApiProperty(idSchema('bkp'))
  backup_id: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'With PITR: the moment replayed to.' })
  target_time?: string;

  @ApiProperty({ type: Number, example: 12.4 })
  restore_seconds: number;
}
