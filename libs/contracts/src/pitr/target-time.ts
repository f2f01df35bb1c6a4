import { ValidateBy } from 'class-validator';

/** A WAL position as PostgreSQL prints it: `X/XXXXXXXX`, hexadecimal. */
export const LSN_PATTERN = /^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/;

/** The fields that name where a PITR restore stops; a request gives exactly one. */
export const PITR_TARGET_FIELDS = ['target_time', 'target_lsn', 'target_restore_point'] as const;

/** How many of the target fields a request gives. */
export function targetCount(body: object): number {
  const given = body as Record<string, unknown>;
  return PITR_TARGET_FIELDS.filter((field) => given[field] !== undefined).length;
}

/** ISO 8601 with a date, a time to the second, up to six decimals and a zone. */
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})$/;

/** A moment to the microsecond: what PostgreSQL keeps of a commit time. */
export interface TargetTime {
  /** Microseconds since 1970-01-01 UTC. */
  micros: bigint;
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, in UTC, always six decimals. */
  iso: string;
}

/**
 * Reads an ISO 8601 timestamp with up to microsecond precision (docs/api/pitr.md#restoring);
 * undefined when it is malformed or names no real moment (a 13th month, a 30th of February).
 */
export function parseTargetTime(text: string): TargetTime | undefined {
  const match = ISO_TIME.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction = '', zone = 'Z'] = match;
  const wholeSeconds = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}${zone}`);
  if (Number.isNaN(wholeSeconds)) return undefined;
  const check = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day))
    return undefined;
  return fromMicros(BigInt(wholeSeconds) * 1000n + BigInt(fraction.padEnd(6, '0')));
}

/** A moment from microseconds since the epoch. */
export function fromMicros(micros: bigint): TargetTime {
  const seconds = micros / 1_000_000n;
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0');
  const iso = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return { micros, iso: `${iso}.${fraction}Z` };
}

/** A JavaScript Date (milliseconds) as microseconds. */
export function microsOf(date: Date): bigint {
  return BigInt(date.getTime()) * 1000n;
}

/** A property holding a timestamp parseTargetTime reads. */
export function IsTargetTime(): PropertyDecorator {
  return ValidateBy({
    name: 'isTargetTime',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && parseTargetTime(value) !== undefined,
      defaultMessage: () =>
        '$property must be an ISO 8601 timestamp with a zone (up to microseconds)',
    },
  });
}
