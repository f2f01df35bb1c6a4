import { qualifiedKind, qualifiedPlural, type ResourceType } from './resource-types.js';

/** A failure `Status` object, the body of every error the Kubernetes API answers. */
export interface FailureStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  code: number;
  details?: StatusDetails;
}

/** What a Status says about the object it concerns. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: { message: string }[];
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** An error the test API answers as a failure Status with its HTTP code. */
export class ApiStatusError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly reason = REASONS[code] ?? 'Unknown',
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): FailureStatus {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

function detailsOf(type: ResourceType, name: string): StatusDetails {
  return { name, ...(type.group ? { group: type.group } : {}), kind: type.plural };
}

/** 404: `secrets "x" not found`. */
export function notFound(type: ResourceType, name: string): ApiStatusError {
  return new ApiStatusError(
    404,
    `${qualifiedPlural(type)} "${name}" not found`,
    'NotFound',
    detailsOf(type, name),
  );
}

/** 409 AlreadyExists: a create of a name that is taken. */
export function alreadyExists(type: ResourceType, name: string): ApiStatusError {
  return new ApiStatusError(
    409,
    `${qualifiedPlural(type)} "${name}" already exists`,
    'AlreadyExists',
    detailsOf(type, name),
  );
}

/** 409 Conflict: a write that carried a resourceVersion other than the stored one. */
export function conflict(type: ResourceType, name: string): ApiStatusError {
  return new ApiStatusError(
    409,
    `Operation cannot be fulfilled on ${qualifiedPlural(type)} "${name}": the object has been ` +
      'modified; please apply your changes to the latest version and try again',
    'Conflict',
    detailsOf(type, name),
  );
}

/** 422 Invalid, naming each problem as the API server's field errors do. */
export function invalid(type: ResourceType, name: string, problems: string[]): ApiStatusError {
  const listed = problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`;
  return new ApiStatusError(
    422,
    `${qualifiedKind(type)} "${name}" is invalid: ${listed}`,
    'Invalid',
    { ...detailsOf(type, name), kind: type.kind, causes: problems.map((message) => ({ message })) },
  );
}

/** A failure with the code a test asked for (failNextWrite), worded like the real one. */
export function injectedFailure(type: ResourceType, name: string, code: number): ApiStatusError {
  if (code === 409) return conflict(type, name);
  return new ApiStatusError(
    code,
    `${qualifiedPlural(type)} "${name}": failure injected by the test (HTTP ${code})`,
    REASONS[code] ?? 'Unknown',
    detailsOf(type, name),
  );
}

/** 400 BadRequest. */
export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError(400, message, 'BadRequest');
}
