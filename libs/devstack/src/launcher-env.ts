import { CommonEnv, validateEnv } from '@pgcloud/config';
import { IsInt, IsOptional, IsString, IsUrl, Max, Min } from 'class-validator';

/** What the stack launcher reads from the environment; every app reads the rest itself. */
export class LauncherEnv extends CommonEnv {
  @IsInt()
  @Min(0)
  @Max(65535)
  GATEWAY_PORT: number = 8080;

  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  PUBLIC_BASE_URL?: string;

  /** Where the stack's local servers live (the provisioner's DATA_DIR). */
  @IsString()
  DATA_DIR: string = '.data';

  @IsInt()
  @Min(1)
  @Max(65535)
  DAEMON_PORT: number = 5480;

  @IsOptional()
  @IsString()
  DAEMON_DATA_DIR?: string;
}

/** Reads the launcher's settings; a bad value stops it and names the variable. */
export function loadLauncherEnv(
  env: Record<string, string | undefined> = process.env,
): LauncherEnv {
  return validateEnv(LauncherEnv, env);
}
