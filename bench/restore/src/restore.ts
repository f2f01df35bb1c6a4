// `npm run bench:restore`: the time pgcloud takes to restore a backup of a database of
// at least 500 MB in place (download with its checksum, extract, recovery, promotion, a
// TLS check, the swap), beside downloading the same archive through its link, extracting
// it and starting PostgreSQL on it by hand, in the same run: every sample, the medians,
// their spread and ratios (with the download, and without it as the archive were a local
// file), and the phases of each. It only prints; nothing passes or fails on it.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Client } from '@pgcloud/api-client';
import {
  createBackup,
  createdRestore,
  getBackup,
  getBackupDownload,
  getRestore,
  restoreBackup,
  unwrap,
} from '@pgcloud/api-client';
import type { Cleanup, DatabasePath, PhaseSeconds, Samples } from '@pgcloud/bench-support';
import { RestoredByHand, downloadArchive } from '@pgcloud/testing';
import {
  benchCount,
  bulkDatabase,
  formatRatioOfMedians,
  formatSamples,
  phaseRows,
  pollUntil,
  runBench,
  timeRestorePhases,
  withParts,
} from '@pgcloud/bench-support';

// 3.3 million rows: a data directory of about 1.2 GB, an archive of about 270 MB.
const ROWS = Number(process.env['BENCH_ROWS'] ?? '3300000');
const LABELS = { kind: 'backup', target: 'in_place' } as const;

/** Seconds of one in-place restore: from the record's start to its completion. */
async function timeOurs(client: Client, path: DatabasePath, backupId: string): Promise<number> {
  const created = createdRestore(
    await unwrap(restoreBackup({ client, path: { ...path, backup_id: backupId }, body: {} })),
  );
  const restore = await pollUntil(
    () => unwrap(getRestore({ client, path: { ...path, restore_id: created.restore_id } })),
    (r) => r.status === 'completed' || r.status === 'failed',
  );
  if (restore.status === 'failed') throw new Error(`restore failed: ${restore.error ?? '?'}`);
  return (Date.parse(restore.completed_at ?? '') - Date.parse(restore.started_at)) / 1000;
}

/**
 * Seconds to download the archive through its link (with its SHA-256, into a file), to
 * extract it, and to start PostgreSQL on it (crash recovery included).
 */
interface HandSteps {
  download: number;
  extraction: number;
  start: number;
}

async function timeByHand(
  client: Client,
  backupPath: DatabasePath & { backup_id: string },
  parent: string,
): Promise<HandSteps> {
  const started = performance.now();
  const link = await unwrap(getBackupDownload({ client, path: backupPath }));
  const dir = await mkdtemp(join(parent, 'pgcloud-archive-'));
  try {
    // PostgreSQL's OS user extracts it.
    await chmod(dir, 0o755);
    const fetched = await downloadArchive(link.download_url, dir);
    if (!fetched.file) throw new Error(`download answered ${fetched.status}`);
    const downloaded = performance.now();
    const restored = await RestoredByHand.extract(fetched.file, parent);
    try {
      const extracted = performance.now();
      await restored.start();
      return {
        download: (downloaded - started) / 1000,
        extraction: (extracted - downloaded) / 1000,
        start: (performance.now() - extracted) / 1000,
      };
    } finally {
      await restored.remove();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function report(
  title: string,
  ours: { seconds: number; phases: PhaseSeconds }[],
  byHand: HandSteps[],
): string {
  const pgcloud: Samples = { label: 'pgcloud', values: ours.map((o) => o.seconds) };
  const hand: Samples = {
    label: 'by hand',
    values: byHand.map((h) => h.download + h.extraction + h.start),
  };
  const local: Samples = {
    label: 'by hand from a local file',
    values: byHand.map((h) => h.extraction + h.start),
  };
  const phases = phaseRows(
    ours.map((o) => o.phases),
    pgcloud.values,
  );
  const steps = [
    { label: 'download', values: byHand.map((h) => h.download) },
    { label: 'extraction', values: byHand.map((h) => h.extraction) },
    { label: 'start (crash recovery)', values: byHand.map((h) => h.start) },
  ];
  return [
    title,
    '  pgcloud: completed_at - started_at of an in-place restore (download + SHA-256 and extraction, recovery, promotion, TLS check on a spare port, swap, TLS check); its phases as database-provisioner times them (pgcloud_restore_phase_duration_seconds, kind=backup, target=in_place)',
    '  by hand: the archive downloaded through its link (SHA-256 as it streams) into a file, tar --zstd -x of it, then pg_ctl start until it accepts connections',
    '',
    ...formatSamples([...withParts(pgcloud, phases), ...withParts(hand, steps)]),
    '',
    formatRatioOfMedians(pgcloud, hand, 1.3),
    formatRatioOfMedians(pgcloud, local, 1.3),
  ].join('\n');
}

await runBench(async (cleanups: Cleanup[]) => {
  const runs = benchCount(3);
  if (!Number.isInteger(ROWS) || ROWS < 1)
    throw new Error(`BENCH_ROWS must be a whole number >= 1, not "${process.env['BENCH_ROWS']}"`);
  const { client, path, scratchDir, stack } = await bulkDatabase(cleanups, 'bench-restore', ROWS);
  console.error('taking a backup');
  const created = await unwrap(createBackup({ client, path }));
  const backupPath = { ...path, backup_id: created.id };
  const backup = await pollUntil(
    () => unwrap(getBackup({ client, path: backupPath })),
    (b) => b.status === 'completed' || b.status === 'failed',
  );
  if (backup.status !== 'completed') throw new Error(`backup failed: ${backup.error ?? '?'}`);
  const provisioner = stack.managementUrl('database-provisioner');
  const ours: { seconds: number; phases: PhaseSeconds }[] = [];
  const byHand: HandSteps[] = [];
  for (let run = 1; run <= runs; run++) {
    console.error(`run ${run} of ${runs}: by hand, then pgcloud`);
    byHand.push(await timeByHand(client, backupPath, scratchDir));
    const timed = await timeRestorePhases(provisioner, LABELS, () =>
      timeOurs(client, path, backup.id),
    );
    ours.push({ seconds: timed.result, phases: timed.phases });
  }
  const title = `restore of a ${(backup.size_bytes / 1e6).toFixed(0)} MB backup (zstd) of a database filled with ${ROWS} rows, ${runs} samples each, seconds`;
  return report(title, ours, byHand);
});
