/** A duration as settings write it: a whole number and a unit, `90s`, `30m`, `12h`, `7d`. */
export const DURATION_PATTERN = /^[1-9][0-9]*(s|m|h|d)$/;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The milliseconds a duration (DURATION_PATTERN) stands for; throws on anything else. */
export function durationMs(text: string): number {
  const match = DURATION_PATTERN.exec(text);
  if (!match) throw new Error(`not a duration such as 90s, 30m, 12h or 7d: '${text}'`);
  return Number.parseInt(text, 10) * (UNIT_MS[match[1] ?? ''] ?? 0);
}
