import { ApiError, ApiUnreachableError } from '@pgcloud/api-client';

/** The exit codes docs/cli.md gives. */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  conflict: 5,
  unavailable: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the command line itself finds (no token, no project chosen, a bad file). */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    readonly exitCode: ExitCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The exit code of an API error, by its code first and its status after. */
export function exitCodeOfApiError(error: ApiError): ExitCode {
  if (error.code === 'QUOTA_EXCEEDED') return EXIT.conflict;
  if (error.code === 'VALIDATION_ERROR') return EXIT.usage;
  switch (error.status) {
    case 401:
      return EXIT.auth;
    case 403:
      return error.code === 'ACCESS_DENIED' ? EXIT.auth : EXIT.error;
    case 404:
      return EXIT.notFound;
    case 409:
    case 422:
      return EXIT.conflict;
    case 429:
    case 502:
    case 503:
    case 504:
      return EXIT.unavailable;
    default:
      return EXIT.error;
  }
}

/** The exit code of anything a command threw. */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof ApiError) return exitCodeOfApiError(error);
  if (error instanceof ApiUnreachableError) return EXIT.unavailable;
  return EXIT.error;
}
