import { DRILL_KINDS } from '@pgcloud/contracts';
import { Counter, Gauge } from 'prom-client';

/** Drills that ended, by kind (automated, manual) and outcome (passed, failed). */
export const drillsTotal = new Counter({
  name: 'pgcloud_drills_total',
  help: 'Restore drills that ended, by kind and outcome (passed or failed).',
  labelNames: ['kind', 'outcome'] as const,
});
// Every series from 0: the first failure is an increase an alert sees.
for (const kind of DRILL_KINDS)
  for (const outcome of ['passed', 'failed']) drillsTotal.inc({ kind, outcome }, 0);

/**
 * Running databases with a backup whose last passed drill is older than two periods of
 * their schedule (or that never had one, being older than that). Set by the replica that
 * ran the last schedule round; 0 on the others (alerts take the max).
 */
export const drillsOverdue = new Gauge({
  name: 'pgcloud_drills_overdue',
  help: 'Running databases with no restore drill passed in two periods of their schedule.',
});
