import type { CertificateAuthority, PgTools } from '@pgcloud/postgres';
import { ensureOwnedDir, issueServerCertificate } from '@pgcloud/postgres';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DrillOutcome, DrillSpec } from '../database-driver.js';
import { drillBuild } from '../restore-build/drill-build.js';
import { pgCtl } from '../restore-build/pg-ctl.js';
import { exists } from './local-files.js';
import { driverPaths, drillPaths } from './server-paths.js';

/**
 * A restore drill on this host: a scratch server under DATA_DIR/local/drills with a
 * certificate of its own for the loopback check (it takes no other login), built and
 * checked as a restore is, and removed whatever happens, a drill left before included.
 */
export async function runLocalDrill(
  dataDir: string,
  spec: DrillSpec,
  tools: PgTools,
  ca: CertificateAuthority,
): Promise<DrillOutcome> {
  const { osUser } = tools;
  await discardLocalDrill(dataDir, spec.drillId, tools);
  const paths = drillPaths(dataDir, spec.drillId);
  try {
    await ensureOwnedDir(driverPaths(dataDir).drillsDir, osUser);
    await ensureOwnedDir(paths.drillDir, osUser);
    await ensureOwnedDir(paths.tlsDir, osUser);
    await issueServerCertificate(ca, {
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
      outDir: paths.tlsDir,
      osUser,
    });
    return await drillBuild(paths, spec, {
      tools: { ...tools, ...(spec.signal ? { signal: spec.signal } : {}) },
      caPem: ca.pem,
      ...(spec.progress ? { progress: spec.progress } : {}),
    });
  } finally {
    await discardLocalDrill(dataDir, spec.drillId, tools);
  }
}

/** Stops a drill's scratch server if it runs, and removes its files. */
export async function discardLocalDrill(
  dataDir: string,
  drillId: string,
  tools: PgTools,
): Promise<void> {
  const paths = drillPaths(dataDir, drillId);
  if (await exists(join(paths.dataDir, 'postmaster.pid')))
    await pgCtl(tools, paths.dataDir, 'stop', ['-m', 'immediate', '-t', '60']).catch(
      () => undefined,
    );
  await rm(paths.drillDir, { recursive: true, force: true });
}
