import { CommonEnv, parsePairs, validateEnv } from '@pgcloud/config';
import type { TierLimits } from '@pgcloud/messaging';
import { IsInt, Matches, Min } from 'class-validator';

/** project-service settings (docs/configuration.md#project-service). */
export class ProjectServiceConfig extends CommonEnv {
  /** The deployment's regions, `id=name` separated by commas; the first is the default. */
  @Matches(/^\s*[a-z0-9-]+\s*(=[^,]+)?(,\s*[a-z0-9-]+\s*(=[^,]+)?)*\s*$/, {
    message:
      'must be id=name pairs separated by commas, ids of lowercase letters, digits and hyphens',
  })
  REGIONS: string = 'local=This host';

  /**
   * Projects per account on the Free tier; one more answers 403 QUOTA_EXCEEDED
   * (docs/api/projects.md).
   */
  @IsInt()
  @Min(1)
  PROJECT_LIMIT_FREE: number = 5;

  /** Projects per account on the Pro tier. */
  @IsInt()
  @Min(1)
  PROJECT_LIMIT_PRO: number = 50;

  get regions(): { id: string; name: string }[] {
    return parsePairs(this.REGIONS);
  }

  get projectLimits(): TierLimits {
    return { free: this.PROJECT_LIMIT_FREE, pro: this.PROJECT_LIMIT_PRO };
  }
}

/** Reads and checks the settings; a bad value stops the service at start. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): ProjectServiceConfig {
  return validateEnv(ProjectServiceConfig, env);
}
