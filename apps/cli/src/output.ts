import { ApiError, ApiUnreachableError } from '@pgcloud/api-client';
import { CliError } from './exit-codes.js';

/** How a command prints: `--json`, `--quiet`, or readable text. */
export interface OutputMode {
  json?: boolean;
  quiet?: boolean;
}

/** One column of a table: its header and how a row shows in it. */
export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

/** The text of one value in a table or field list. */
function cell(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Rows under aligned headers; "(none)" when there are no rows. */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => cell(column.value(row))));
  const headers = columns.map((column) => column.header.toUpperCase());
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...cells.map((line) => line[i].length)),
  );
  const line = (values: string[]) =>
    values
      .map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i])))
      .join('  ');
  return [line(headers), ...cells.map(line)].join('\n');
}

/** One record as `label: value` lines, labels aligned. */
export function renderFields(fields: readonly [label: string, value: unknown][]): string {
  const width = Math.max(...fields.map(([label]) => label.length));
  return fields
    .map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${cell(value)}`)
    .join('\n');
}

/**
 * Where a command's answer and messages go. The answer goes to stdout: with `--json`, what
 * the API's `data` held; with `--quiet`, only its short form (an id, a URL), if any;
 * otherwise a table or field list. Notes and progress go to stderr, never with `--quiet`.
 */
export class Output {
  constructor(
    readonly mode: OutputMode,
    readonly stdout: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
    readonly stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number } = process.stderr,
  ) {}

  /** Whether stderr is a terminal that can show a live progress line. */
  get interactive(): boolean {
    return this.stderr.isTTY === true && !this.mode.quiet;
  }

  /** Prints a command's answer. */
  result(data: unknown, readable: () => string, short?: () => string): void {
    if (this.mode.json) this.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    else if (this.mode.quiet) {
      const text = short?.();
      if (text !== undefined) this.stdout.write(`${text}\n`);
    } else this.stdout.write(`${readable()}\n`);
  }

  /** A message for the person (what happened, what to do next), on stderr. */
  note(message: string): void {
    if (!this.mode.quiet) this.stderr.write(`${message}\n`);
  }

  /** An error, with the API's code and request id: JSON on stderr with `--json`. */
  error(error: unknown): void {
    const { code, message, requestId } = describeError(error);
    if (this.mode.json) {
      this.stderr.write(`${JSON.stringify({ code, message, request_id: requestId ?? null })}\n`);
      return;
    }
    const about = [code && `code ${code}`, requestId && `request id ${requestId}`].filter(Boolean);
    this.stderr.write(`error: ${message}${about.length ? ` (${about.join(', ')})` : ''}\n`);
    if (error instanceof ApiError)
      for (const detail of error.details)
        this.stderr.write(`  ${detail.field}: ${detail.message}\n`);
  }
}

/** The code, message and request id an error shows. */
export function describeError(error: unknown): {
  code: string;
  message: string;
  requestId?: string;
} {
  if (error instanceof ApiError)
    return { code: error.code, message: error.message, requestId: error.requestId };
  if (error instanceof ApiUnreachableError) return { code: 'UNREACHABLE', message: error.message };
  if (error instanceof CliError) return { code: error.code, message: error.message };
  return { code: 'ERROR', message: error instanceof Error ? error.message : String(error) };
}
