import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LSN_PATTERN } from '@pgcloud/contracts';
import type {
  DrillSpec,
  RecoveryTarget,
  RestoreArchive,
  RestoreRecovery,
  RestoreSpec,
} from '../drivers/database-driver.js';
import { checkedRecoveryTarget } from '../drivers/restore-build/recovery.js';

/** restore.json: a driver's RestoreSpec less the server, the signal and the progress. */
export type RestoreInput = Omit<RestoreSpec, 'serverId' | 'signal' | 'serverMade' | 'progress'>;

/** The Secret's keys the program reads (tls.crt and tls.key are copied, see job-tls.ts). */
export const INPUT_FILES = {
  spec: 'restore.json',
  cert: 'tls.crt',
  key: 'tls.key',
  ca: 'ca.crt',
} as const;

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Reads and checks restore.json. Its content is secret (pre-signed links, passwords):
 * no error quotes it, they name the field that is wrong.
 */
export async function readRestoreInput(inputDir: string): Promise<RestoreInput> {
  return restoreInput(await readInputJson(inputDir));
}

/** Reads and checks a drill's restore.json, as readRestoreInput does a restore's. */
export async function readDrillInput(inputDir: string): Promise<DrillInput> {
  return drillInput(await readInputJson(inputDir));
}

async function readInputJson(inputDir: string): Promise<unknown> {
  const text = await readFile(join(inputDir, INPUT_FILES.spec), 'utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${INPUT_FILES.spec} is not JSON`);
  }
}

/** Checks the shape of a parsed restore.json and answers it typed. */
export function restoreInput(value: unknown): RestoreInput {
  const spec = record(value, INPUT_FILES.spec);
  const input: RestoreInput = {
    restoreId: text(spec['restoreId'], 'restoreId'),
    archive: archiveOf(spec),
    archivedDatabaseName: text(spec['archivedDatabaseName'], 'archivedDatabaseName'),
    databaseName: text(spec['databaseName'], 'databaseName'),
    password: text(spec['password'], 'password'),
    replicationPassword: text(spec['replicationPassword'], 'replicationPassword'),
  };
  const recovery = recoveryOf(spec);
  return recovery ? { ...input, recovery } : input;
}

/** A drill's restore.json: a driver's DrillSpec less the signal and the progress. */
export type DrillInput = Omit<DrillSpec, 'signal' | 'progress' | 'serverId'>;

/** Checks the shape of a parsed restore.json of a drill and answers it typed. */
export function drillInput(value: unknown): DrillInput {
  const spec = record(value, INPUT_FILES.spec);
  const input: DrillInput = {
    drillId: text(spec['drillId'], 'drillId'),
    archive: archiveOf(spec),
    archivedDatabaseName: text(spec['archivedDatabaseName'], 'archivedDatabaseName'),
  };
  const recovery = recoveryOf(spec);
  return recovery ? { ...input, recovery } : input;
}

function archiveOf(spec: Record<string, unknown>): RestoreArchive {
  const archive = record(spec['archive'], 'archive');
  const sha256 = text(archive['sha256'], 'archive.sha256');
  if (!SHA256.test(sha256)) throw new Error('archive.sha256 is not a hex SHA-256');
  return { url: text(archive['url'], 'archive.url'), sha256 };
}

function recoveryOf(spec: Record<string, unknown>): RestoreRecovery | undefined {
  if (spec['recovery'] === undefined || spec['recovery'] === null) return undefined;
  const recovery = record(spec['recovery'], 'recovery');
  const target = checkedRecoveryTarget(
    recoveryTarget(record(recovery['target'], 'recovery.target')),
  );
  if (!Array.isArray(recovery['segments'])) throw new Error('recovery.segments is not a list');
  const segments = (recovery['segments'] as unknown[]).map((item, i) => {
    const where = `recovery.segments[${i}]`;
    const segment = record(item, where);
    const sizeBytes = segment['sizeBytes'];
    if (typeof sizeBytes !== 'number' || !Number.isInteger(sizeBytes) || sizeBytes < 0)
      throw new Error(`${where}.sizeBytes is not a byte count`);
    if (typeof segment['partial'] !== 'boolean')
      throw new Error(`${where}.partial is not true or false`);
    const urls = segment['urls'];
    if (!Array.isArray(urls) || urls.length === 0) throw new Error(`${where}.urls is not a list`);
    const etags = segment['etags'];
    if (
      etags !== undefined &&
      (!Array.isArray(etags) ||
        etags.length !== urls.length ||
        !etags.every((etag) => etag === null || typeof etag === 'string'))
    )
      throw new Error(`${where}.etags is not one ETag (or null) per link`);
    const compression = segment['compression'];
    if (compression !== undefined && compression !== 'zstd')
      throw new Error(`${where}.compression is not zstd`);
    return {
      name: text(segment['name'], `${where}.name`),
      urls: urls.map((url, j) => text(url, `${where}.urls[${j}]`)),
      partial: segment['partial'],
      sizeBytes,
      ...(etags ? { etags: etags as (string | null)[] } : {}),
      ...(compression === 'zstd' ? { compression: 'zstd' as const } : {}),
    };
  });
  return { segments, target };
}

/** Exactly one of a time, a WAL position or a restore point's name. */
function recoveryTarget(target: Record<string, unknown>): RecoveryTarget {
  const kinds = Object.keys(target);
  if (kinds.length !== 1) throw new Error('recovery.target names more or less than one target');
  if ('time' in target) {
    const time = text(target['time'], 'recovery.target.time');
    if (Number.isNaN(Date.parse(time))) throw new Error('recovery.target.time is not a time');
    return { time };
  }
  if ('lsn' in target) {
    const lsn = text(target['lsn'], 'recovery.target.lsn');
    if (!LSN_PATTERN.test(lsn)) throw new Error('recovery.target.lsn is not a WAL position');
    return { lsn };
  }
  if ('restorePoint' in target)
    return { restorePoint: text(target['restorePoint'], 'recovery.target.restorePoint') };
  throw new Error(`recovery.target.${kinds[0]} is not a target`);
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${what} is not an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new Error(`${what} is missing`);
  return value;
}
