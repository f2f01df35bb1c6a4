import type { RequestContext } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';

/** The caller's user id, or AUTH_REQUIRED when a message carries none. */
export function requireUser(ctx: RequestContext): string {
  if (!ctx.userId) throw new DomainError('AUTH_REQUIRED', 'This operation needs a signed-in user.');
  return ctx.userId;
}
