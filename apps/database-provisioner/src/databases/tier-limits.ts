import type { DatabaseConfig, Tier } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import type { ProvisionerConfig } from '../config.js';

/**
 * The Free tier's ceilings (docs/api/databases.md); Pro has none beyond the general
 * bounds.
 */
export interface FreeTierLimits {
  databasesPerProject: number;
  cpu: number;
  memory: number;
  storage: number;
}

/** The Free tier's ceilings as the deployment sets them (FREE_MAX_*). */
export function freeTierLimits(config: ProvisionerConfig): FreeTierLimits {
  return {
    databasesPerProject: config.FREE_MAX_DATABASES_PER_PROJECT,
    cpu: config.FREE_MAX_CPU,
    memory: config.FREE_MAX_MEMORY,
    storage: config.FREE_MAX_STORAGE,
  };
}

/** Throws QUOTA_EXCEEDED when a size passes its tier's limits (at creation or a resize). */
export function assertSizeWithinTier(
  tier: Tier | undefined,
  config: DatabaseConfig,
  free: FreeTierLimits,
): void {
  if (tier === 'pro') return;
  const over = (['cpu', 'memory', 'storage'] as const).filter((key) => config[key] > free[key]);
  if (over.length > 0) {
    const limits = over.map((key) => `${key} <= ${free[key]}`).join(', ');
    throw new DomainError('QUOTA_EXCEEDED', `The Free tier allows ${limits}.`);
  }
}

/** The config a database gets when the request leaves parts out. */
export const DEFAULT_CONFIG: DatabaseConfig = { cpu: 1, memory: 1, storage: 10 };

/** Throws QUOTA_EXCEEDED when a new database would pass its tier's limits. */
export function assertWithinTier(
  tier: Tier | undefined,
  config: DatabaseConfig,
  databasesInProject: number,
  free: FreeTierLimits,
): void {
  if (tier === 'pro') return;
  if (databasesInProject >= free.databasesPerProject) {
    throw new DomainError(
      'QUOTA_EXCEEDED',
      `The Free tier allows ${free.databasesPerProject} databases per project.`,
    );
  }
  assertSizeWithinTier(tier, config, free);
}
