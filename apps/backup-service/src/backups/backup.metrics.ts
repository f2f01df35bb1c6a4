import { Gauge, Histogram } from 'prom-client';

const MIB = 1024 * 1024;

/*
 * Base backups as pgcloud_* metrics on prom-client's default registry (served on the
 * management port). No database or backup ids as labels: their number only grows.
 */

/**
 * How long one attempt at a backup took, from streaming to the record's final write, by
 * how it ended: `completed`, `failed` (it threw: retried, or failed for good), `discarded`
 * (the record moved on while it ran: deleted, or completed by another attempt). From
 * seconds to hours.
 */
export const backupSeconds = new Histogram({
  name: 'pgcloud_backup_duration_seconds',
  help: 'How long backup attempts took, by outcome (completed, failed, discarded).',
  labelNames: ['outcome'] as const,
  buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400],
});

/**
 * The size of each completed backup's archive as uploaded to S3 (compressed); its _sum is
 * every byte completed backups uploaded. From 1 MiB to 1 TiB, in steps of four.
 */
export const backupBytes = new Histogram({
  name: 'pgcloud_backup_size_bytes',
  help: 'Bytes of archive uploaded per completed backup.',
  buckets: [1, 4, 16, 64, 256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576].map(
    (mib) => mib * MIB,
  ),
});

/**
 * Running databases without a completed backup for a schedule period and a margin, and none
 * under way (docs/operating.md#alerts-and-dashboards): counted by the replica that ran the
 * schedule round, 0 on the others, so the max over replicas is the count.
 */
export const backupsOverdue = new Gauge({
  name: 'pgcloud_backups_overdue',
  help: 'Running databases with no backup completed in their schedule period plus a margin, and none under way.',
});
