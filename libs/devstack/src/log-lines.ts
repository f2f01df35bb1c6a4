/** One line of an app's JSON log (libs/observability's logger). */
export interface LogRecord {
  time: string;
  level: string;
  service: string;
  context?: string;
  request_id?: string;
  message: unknown;
}

/** The JSON records among log lines (the stack's own lines and stack traces are not). */
export function parseLogLines(text: string): LogRecord[] {
  return text.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as LogRecord];
    } catch {
      return [];
    }
  });
}
