import { Redis } from 'ioredis';

/**
 * A client of the Redis the gateways share (rate limits, Idempotency-Keys): every command
 * answers or fails within `timeoutMs`, and a failure is reported to that command's caller
 * only. Commands wait for the connection (at most the timeout), so a start or a reconnect
 * does not fail them for nothing. Commands sent in the same turn of the event loop share
 * one write (auto-pipelining): under load, the rate limit's take of each request is not a
 * system call of its own on either side.
 */
export function sharedRedis(url: string, timeoutMs: number): Redis {
  const redis = new Redis(url, {
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: true,
  });
  redis.on('error', () => undefined);
  return redis;
}
