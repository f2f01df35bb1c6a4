import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReadinessCheck, ReadinessSource } from '@pgcloud/observability';
import type { LocalDriverSettings } from './local.driver.js';

/** The PostgreSQL programs the local driver runs: initdb, postgres, and pg_ctl to stop it. */
export const LOCAL_DRIVER_PROGRAMS = ['initdb', 'pg_ctl', 'postgres'] as const;

/**
 * The local driver can work: DATA_DIR is there and writable, and PostgreSQL's programs are
 * in PG_BIN_DIR and executable (/readyz's `driver`). Reads file modes only, so it is cheap.
 */
export class LocalDriverReadiness implements ReadinessSource {
  constructor(private readonly settings: Pick<LocalDriverSettings, 'pgBinDir' | 'dataDir'>) {}

  readinessChecks(): ReadinessCheck[] {
    return [{ name: 'driver', check: () => this.check() }];
  }

  private async check(): Promise<void> {
    const { dataDir, pgBinDir } = this.settings;
    await access(dataDir, constants.W_OK | constants.X_OK).catch(() => {
      throw new Error(`DATA_DIR ${dataDir} is missing or not writable`);
    });
    const missing: string[] = [];
    for (const program of LOCAL_DRIVER_PROGRAMS)
      await access(join(pgBinDir, program), constants.X_OK).catch(() => missing.push(program));
    if (missing.length > 0)
      throw new Error(`PostgreSQL's ${missing.join(', ')} not executable in ${pgBinDir}`);
  }
}
