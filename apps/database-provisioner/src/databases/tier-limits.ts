import type { DatabaseConfig, Tier } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';

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
  const over = (['cpu', 'memory', 'storage'] as const).filter((key) => config[key] > free[key]);
  if (over.length > 0) {
    const limits = over.map((key) => `${key} <= ${free[key]}`).join(', ');
    throw new DomainError('QUOTA_EXCEEDED', `The Free tier allows ${limits}.`);
  }
}
