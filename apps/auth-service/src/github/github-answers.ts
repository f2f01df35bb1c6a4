import type { DeviceAuthorization } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';

/** GitHub's answer to one poll of its token endpoint, in pgcloud's terms. */
export type GithubPollAnswer =
  | { status: 'pending' }
  | { status: 'slow_down'; interval: number }
  | { status: 'approved'; githubToken: string }
  | { status: 'refused'; error: string };

/** The GitHub user behind a token, as /user tells it (email is null when not public). */
export interface GithubUser {
  id: number;
  login: string;
  email: string | null;
}

/**
 * GitHub always sends the new interval with slow_down; should it not, its minimum of 5 s
 * plus the 5 s step of RFC 8628 is a safe guess.
 */
const SLOW_DOWN_FALLBACK_SECONDS = 10;

/** The answer of /login/device/code, passed on unchanged; a malformed one is GitHub's fault. */
export function deviceAuthorizationFrom(body: unknown): DeviceAuthorization {
  const answer = record(body);
  const { device_code, user_code, verification_uri, expires_in, interval } = answer;
  if (
    typeof device_code !== 'string' ||
    typeof user_code !== 'string' ||
    typeof verification_uri !== 'string' ||
    !isPositiveInteger(expires_in) ||
    !isPositiveInteger(interval)
  ) {
    throw new Error(`GitHub's device code answer is incomplete${errorSuffix(answer)}`);
  }
  return { device_code, user_code, verification_uri, expires_in, interval };
}

/** Reads an answer of /login/oauth/access_token: a token, or GitHub's error name. */
export function pollAnswerFrom(body: unknown): GithubPollAnswer {
  const answer = record(body);
  if (typeof answer['access_token'] === 'string' && answer['access_token'].length > 0)
    return { status: 'approved', githubToken: answer['access_token'] };
  const error = typeof answer['error'] === 'string' ? answer['error'] : 'no_error_given';
  if (error === 'authorization_pending') return { status: 'pending' };
  if (error === 'slow_down') {
    const interval = answer['interval'];
    return {
      status: 'slow_down',
      interval: isPositiveInteger(interval) ? interval : SLOW_DOWN_FALLBACK_SECONDS,
    };
  }
  return { status: 'refused', error };
}

/** The DomainError a client gets for GitHub's refusal of a device code. */
export function refusalError(githubError: string): DomainError {
  switch (githubError) {
    case 'access_denied':
      return new DomainError('ACCESS_DENIED', 'The sign-in request was denied on GitHub.');
    case 'expired_token':
      return new DomainError('DEVICE_CODE_EXPIRED', 'The device code has expired; start again.');
    default:
      // incorrect_device_code, bad_verification_code, and whatever GitHub adds later.
      return new DomainError(
        'DEVICE_CODE_INVALID',
        'The device code is unknown or was already used.',
      );
  }
}

/** The user of GET /user; a malformed one is GitHub's fault. */
export function githubUserFrom(body: unknown): GithubUser {
  const answer = record(body);
  const { id, login, email } = answer;
  if (!isPositiveInteger(id) || typeof login !== 'string' || login.length === 0)
    throw new Error(`GitHub's /user answer has no id or login${errorSuffix(answer)}`);
  return { id, login, email: typeof email === 'string' && email.length > 0 ? email : null };
}

/** The primary address of GET /user/emails when GitHub has verified it, else null. */
export function primaryVerifiedEmail(body: unknown): string | null {
  if (!Array.isArray(body)) return null;
  for (const entry of body as unknown[]) {
    const { email, primary, verified } = record(entry);
    if (primary === true && verified === true && typeof email === 'string') return email;
  }
  return null;
}

/** The address of a GitHub user who shows none. */
export function noreplyEmail(login: string): string {
  return `${login}@users.noreply.github.com`;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

/** GitHub's error name, which is safe to log (never the whole body: it may hold a token). */
function errorSuffix(answer: Record<string, unknown>): string {
  return typeof answer['error'] === 'string' ? ` (${answer['error']})` : '';
}
