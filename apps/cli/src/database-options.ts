import type { CreateDatabaseDto, DatabaseConfigDto } from '@pgcloud/api-client';
import { InvalidArgumentError } from 'commander';

const DECIMAL = /^(?:\d+(?:\.\d+)?|\.\d+)$/;

/**
 * A size flag's value (`--cpu 0.5`): plain decimal notation only, so that `0x10`, `1e3`,
 * `Infinity` or `2GB` are usage errors here rather than surprises at the API. Bounds are
 * the API's to check, by tier.
 */
export function parseSize(value: string): number {
  if (!DECIMAL.test(value))
    throw new InvalidArgumentError(
      `"${value}" is not a plain positive number: write it like 2 or 0.5`,
    );
  return Number(value);
}

/** A whole number within [min, max], for `--retention-days`, `--limit` and `--expires-in-days`. */
export function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`"${value}" is not a whole number from ${min} to ${max}`);
    return Number(value);
  };
}

/** The flags of `db create`. */
export interface CreateDatabaseFlags {
  cpu?: number;
  memory?: number;
  storage?: number;
  region?: string;
}

/**
 * The POST body: config carries only the sizes given, the API's defaults fill the rest
 * (1 vCPU, 1 GiB, 10 GiB), and there is no config at all when none is given.
 */
export function createDatabaseBody(name: string, flags: CreateDatabaseFlags): CreateDatabaseDto {
  const config: DatabaseConfigDto = {};
  if (flags.cpu !== undefined) config.cpu = flags.cpu;
  if (flags.memory !== undefined) config.memory = flags.memory;
  if (flags.storage !== undefined) config.storage = flags.storage;
  return {
    name,
    ...(flags.region ? { region: flags.region } : {}),
    // A size not given is left to the API's default.
    ...(Object.keys(config).length ? { config } : {}),
  };
}
