import { DomainError } from '@pgcloud/contracts';

/**
 * Refuses a target URL the deployment does not deliver to, before it is stored: `https:`
 * only, unless WEBHOOK_ALLOW_PRIVATE_TARGETS also allows `http:` (docs/api/webhooks.md#targets).
 * Addresses are checked at each attempt, where the host is resolved.
 */
export function assertTargetUrl(url: string, allowPrivate: boolean): void {
  const { protocol } = new URL(url);
  if (protocol === 'https:' || (allowPrivate && protocol === 'http:')) return;
  throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
    {
      field: 'url',
      message: allowPrivate ? 'url must be an http or https URL' : 'url must be an https URL',
    },
  ]);
}
