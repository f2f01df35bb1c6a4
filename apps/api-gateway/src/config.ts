import { CommonEnv, validateEnv } from '@pgcloud/config';
import { IsInt, IsOptional, IsUrl, Matches, Max, Min } from 'class-validator';

/** api-gateway settings (docs/configuration.md#api-gateway). */
export class GatewayConfig extends CommonEnv {
  /** The cloud API's port. */
  @IsInt()
  @Min(0)
  @Max(65535)
  GATEWAY_PORT: number = 8080;

  /** Address the gateway listens on. */
  @IsUrl(
    { require_tld: false, require_protocol: false },
    { message: 'must be a host name or address' },
  )
  GATEWAY_HOST: string = '127.0.0.1';

  /**
   * Where people reach the gateway: its host, loopback names and ALLOWED_HOSTS are the only
   * Host names the gateway answers (docs/api/errors.md#the-edge).
   */
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  PUBLIC_BASE_URL: string = 'http://127.0.0.1:8080';

  /**
   * How fast a Free-tier user's token bucket refills, in requests per minute
   * (docs/api/errors.md#rate-limits).
   */
  @IsInt() @Min(1) RATE_LIMIT_FREE_PER_MINUTE: number = 60;
  /** How many requests a Free-tier user's bucket holds: the most it may send at once. */
  @IsInt() @Min(1) RATE_LIMIT_FREE_BURST: number = 10;
  /** How fast a Pro-tier user's bucket refills, in requests per minute. */
  @IsInt() @Min(1) RATE_LIMIT_PRO_PER_MINUTE: number = 1000;
  /** How many requests a Pro-tier user's bucket holds. */
  @IsInt() @Min(1) RATE_LIMIT_PRO_BURST: number = 100;
  /**
   * How fast a client address's buckets refill, in requests per minute: the one of public
   * routes and requests without a valid token, and the one of its failed authentications.
   */
  @IsInt() @Min(1) RATE_LIMIT_IP_PER_MINUTE: number = 60;
  /** How many requests each of a client address's two buckets holds. */
  @IsInt() @Min(1) RATE_LIMIT_IP_BURST: number = 10;

  /**
   * How many proxies stand in front of the gateway (docs/api/errors.md#rate-limits): the client IP
   * is the TRUST_PROXY-th X-Forwarded-For entry from the right; 0 ignores the header.
   */
  @IsInt({ message: 'must be the number of proxies in front of the gateway (0: none)' })
  @Min(0)
  @Max(10)
  TRUST_PROXY: number = 0;

  /**
   * More host names the gateway answers for, comma-separated, besides PUBLIC_BASE_URL's and
   * loopback names (docs/api/errors.md#the-edge).
   */
  @IsOptional()
  @Matches(/^[a-z0-9.-]+(\s*,\s*[a-z0-9.-]+)*$/i, {
    message: 'must be host names separated by commas (no ports)',
  })
  ALLOWED_HOSTS?: string;

  /**
   * The Host names this gateway answers for besides loopback: PUBLIC_BASE_URL's and
   * ALLOWED_HOSTS, lowercase.
   */
  get servedHostNames(): string[] {
    const extra = this.ALLOWED_HOSTS?.split(',').map((name) => name.trim().toLowerCase()) ?? [];
    return [new URL(this.PUBLIC_BASE_URL).hostname.toLowerCase(), ...extra];
  }

  /**
   * How long a checked token is trusted without asking auth-service again (revocation
   * bound), in seconds.
   */
  @IsInt()
  @Min(0)
  @Max(10)
  AUTH_CACHE_SECONDS: number = 5;

  /**
   * Redis for rate-limit buckets and Idempotency-Keys shared by every gateway; unset: this
   * gateway's memory.
   */
  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /**
   * How long a rate-limit check waits for Redis before this gateway limits on its own, and
   * a request with an Idempotency-Key before it is refused with 503.
   */
  @IsInt()
  @Min(10)
  @Max(5000)
  REDIS_TIMEOUT_MS: number = 300;

  /** How long GET / waits for each service's answer before it reports `degraded`, in ms. */
  @IsInt()
  @Min(50)
  @Max(10_000)
  HEALTH_TIMEOUT_MS: number = 1000;
}

/** Reads and checks the settings; a bad value stops the gateway at start. */
export function loadConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  return validateEnv(GatewayConfig, env);
}
