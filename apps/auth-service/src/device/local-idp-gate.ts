import { isLoopbackAddress } from '@pgcloud/config';
import type { AuthServiceConfig } from '../config.js';

/** The settings the gate reads (a subset of AuthServiceConfig, so the rule stays pure). */
export type LocalIdpGateSettings = Pick<
  AuthServiceConfig,
  'IDENTITY_PROVIDER' | 'PUBLIC_BASE_URL' | 'GATEWAY_HOST' | 'LOCAL_IDP_INSECURE'
>;

/** What auth-service does at start: run, run with a warning, or refuse with a reason. */
export type LocalIdpGateVerdict =
  | { verdict: 'start' }
  | { verdict: 'warn'; message: string }
  | { verdict: 'refuse'; message: string };

/**
 * The local identity provider signs in whoever reaches /device, so it may run only where
 * nobody else can reach the gateway (docs/operating.md#before-others-reach-it):
 * PUBLIC_BASE_URL's host is a loopback name and the gateway listens on loopback only.
 * LOCAL_IDP_INSECURE=true is the operator saying they mean it anyway (a private network, a
 * tunnel); that is worth a warning at every start, since nothing else would remind them.
 */
export function localIdpGate(settings: LocalIdpGateSettings): LocalIdpGateVerdict {
  if (settings.IDENTITY_PROVIDER !== 'local') return { verdict: 'start' };
  const reasons: string[] = [];
  const publicHost = new URL(settings.PUBLIC_BASE_URL).hostname;
  if (!isLoopbackAddress(publicHost))
    reasons.push(`PUBLIC_BASE_URL's host ${publicHost} is not a loopback name`);
  if (!isLoopbackAddress(settings.GATEWAY_HOST))
    reasons.push(`the gateway listens beyond loopback (GATEWAY_HOST=${settings.GATEWAY_HOST})`);
  if (reasons.length === 0) return { verdict: 'start' };

  const exposure =
    `IDENTITY_PROVIDER=local signs in anyone who reaches the verification page, ` +
    `and ${reasons.join(' and ')}.`;
  if (settings.LOCAL_IDP_INSECURE)
    return {
      verdict: 'warn',
      message:
        `${exposure} Running anyway because LOCAL_IDP_INSECURE=true: make sure nobody ` +
        `else can reach the gateway, or set IDENTITY_PROVIDER=github.`,
    };
  return {
    verdict: 'refuse',
    message:
      `auth-service refuses to start: ${exposure} Set IDENTITY_PROVIDER=github (with ` +
      `GITHUB_CLIENT_ID) for a deployment others reach, or LOCAL_IDP_INSECURE=true if ` +
      `only trusted people can reach it.`,
  };
}
