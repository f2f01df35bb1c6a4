import { IsInt, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

/**
 * The socket timeouts, in milliseconds, of an HTTP server that faces clients (the gateway's,
 * the daemon's).
 */
export class SocketTimeoutsEnv {
  /** A client's whole request head must arrive within this; then 408 and the socket closes. */
  @IsInt()
  @Min(100)
  @Max(600_000)
  HTTP_HEADERS_TIMEOUT_MS: number = 10_000;

  /** A client's whole request, body included, must arrive within this. */
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  HTTP_REQUEST_TIMEOUT_MS: number = 30_000;

  /** An idle keep-alive connection closes after this. */
  @IsInt()
  @Min(100)
  @Max(600_000)
  HTTP_KEEPALIVE_TIMEOUT_MS: number = 5_000;
}

/** The socket timeouts from the environment (or `<NAME>_FILE`), checked like every setting. */
export function loadSocketTimeouts(
  env: Record<string, string | undefined> = process.env,
): SocketTimeoutsEnv {
  return validateEnv(SocketTimeoutsEnv, env);
}
