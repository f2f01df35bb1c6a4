import { CommonEnv, parsePairs, validateEnv } from '@pgcloud/config';
import { Matches } from 'class-validator';

/** project-service settings (see .env.example). */
export class ProjectServiceConfig extends CommonEnv {
  /** The deployment's regions, `id=name` separated by commas; the first is the default. */
  @Matches(/^\s*[a-z0-9-]+\s*(=[^,]+)?(,\s*[a-z0-9-]+\s*(=[^,]+)?)*\s*$/, {
    message:
      'must be id=name pairs separated by commas, ids of lowercase letters, digits and hyphens',
  })
  REGIONS: string = 'local=This host';

  get regions(): { id: string; name: string }[] {
    return parsePairs(this.REGIONS);
  }
}

/** Reads and checks the settings; a bad value stops the service at start. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): ProjectServiceConfig {
  return validateEnv(ProjectServiceConfig, env);
}
