import { CommonEnv, validateEnv } from '@pgcloud/config';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsUrl,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';

// Hosts without a TLD (127.0.0.1, an internal GitHub Enterprise) are real deployments.
const HTTP_URL = { require_tld: false, protocols: ['http', 'https'], require_protocol: true };

/** auth-service settings (docs/configuration.md#auth-service). */
export class AuthServiceConfig extends CommonEnv {
  /**
   * Base of verification_uri: where people reach the gateway. The local identity provider
   * refuses to run when its host is not a loopback name.
   */
  @IsUrl(HTTP_URL)
  PUBLIC_BASE_URL: string = 'http://127.0.0.1:8080';

  /**
   * Where the gateway listens (the gateway's own setting, read here too): the local
   * identity provider refuses to run when it is beyond loopback.
   */
  @IsUrl(
    { require_tld: false, require_protocol: false },
    { message: 'must be a host name or address' },
  )
  GATEWAY_HOST: string = '127.0.0.1';

  /**
   * The identity provider behind the device flow: `local` (the /device page signs in
   * whoever reaches it) or `github` (GitHub's device flow, proxied; needs GITHUB_CLIENT_ID).
   */
  @IsIn(['local', 'github'])
  IDENTITY_PROVIDER: string = 'local';

  /**
   * Client id of the GitHub OAuth app whose device flow the github provider proxies (the
   * app has the device flow enabled; no client secret is needed).
   */
  @ValidateIf((config: AuthServiceConfig) => config.IDENTITY_PROVIDER === 'github')
  @IsNotEmpty({ message: 'is required when IDENTITY_PROVIDER is github' })
  @Matches(/^[A-Za-z0-9._-]+$/, { message: 'must be the client id of a GitHub OAuth app' })
  GITHUB_CLIENT_ID?: string;

  /**
   * Where GitHub's /login/device/code and /login/oauth/access_token live (GitHub Enterprise
   * Server: the server).
   */
  @IsUrl(HTTP_URL)
  GITHUB_BASE_URL: string = 'https://github.com';

  /**
   * Where GitHub's REST API (/user, /user/emails) lives (GitHub Enterprise Server: its
   * /api/v3).
   */
  @IsUrl(HTTP_URL)
  GITHUB_API_URL: string = 'https://api.github.com';

  /** `expires_in` of a local device request, in seconds. */
  @IsInt()
  @Min(10)
  @Max(3600)
  DEVICE_CODE_TTL_SECONDS: number = 900;

  /** `interval` of a local device request, in seconds. */
  @IsInt()
  @Min(1)
  @Max(60)
  DEVICE_POLL_INTERVAL_SECONDS: number = 5;

  /** Wrong user_codes one client IP may enter per window before it is refused. */
  @IsInt()
  @Min(1)
  DEVICE_WRONG_CODE_LIMIT: number = 10;

  /** The window of DEVICE_WRONG_CODE_LIMIT, in seconds. */
  @IsInt()
  @Min(1)
  DEVICE_WRONG_CODE_WINDOW_SECONDS: number = 900;

  /** Lifetime of an access token, in days. */
  @IsInt()
  @Min(1)
  @Max(3650)
  TOKEN_TTL_DAYS: number = 30;

  /** When set, only these local logins (comma-separated) may sign in. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/, {
    message: 'must be logins separated by commas',
  })
  LOCAL_IDP_ALLOWED_LOGINS?: string;

  /**
   * Run the local identity provider although PUBLIC_BASE_URL's host or GATEWAY_HOST is beyond
   * loopback, with a warning at every start (docs/operating.md#before-others-reach-it).
   */
  // Read from the raw value: implicit conversion would make the string 'false' true.
  @Transform(({ obj }: { obj: Record<string, unknown> }) => {
    const raw = obj['LOCAL_IDP_INSECURE'] ?? 'false';
    return raw === 'true' ? true : raw === 'false' ? false : raw;
  })
  @IsBoolean({ message: 'must be true or false' })
  LOCAL_IDP_INSECURE: boolean = false;

  /**
   * Seconds between two sweeps, which delete expired device requests, old wrong-code records,
   * and tokens expired or revoked a day ago.
   */
  @IsInt()
  @Min(1)
  @Max(86_400)
  AUTH_SWEEP_INTERVAL_SECONDS: number = 3600;

  /**
   * How often, in seconds, the tokens used since the last time get their last_used_at (of
   * GET /auth/tokens) written, in one statement (gateways look a token up at most every 10 s;
   * the list may lag a minute).
   */
  @IsInt()
  @Min(1)
  @Max(50)
  TOKEN_USAGE_FLUSH_SECONDS: number = 30;

  get allowedLogins(): Set<string> | null {
    if (!this.LOCAL_IDP_ALLOWED_LOGINS) return null;
    return new Set(
      this.LOCAL_IDP_ALLOWED_LOGINS.split(',').map((login) => login.trim().toLowerCase()),
    );
  }
}

/** Reads and checks the settings; a bad value stops the service at start. */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): AuthServiceConfig {
  return validateEnv(AuthServiceConfig, env);
}
