// `npm run bench:wal-lag`: how far behind the primary pgcloud's WAL archive stays under a
// steady pgbench write load (p50 and p99 of the receiver's lag_seconds, and of now - the
// recovery window's `to` in milliseconds), the WAL archived per second, and what
// archiving costs the load: pgbench TPS before enabling PITR and with it, and the ratio.
// It only prints; nothing passes or fails on a figure.
import { performance } from 'node:perf_hooks';
import type { Cleanup } from '@pgcloud/bench-support';
import { bulkDatabase, plainMetric, runBench, scrapeMetrics } from '@pgcloud/bench-support';
import type { LagSample } from './lag-samples.js';
import { enablePitrAndWait, sampleDuring, waitForCatchUp } from './lag-samples.js';
import { PgbenchDatabase } from './pgbench.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? '60');
const SCALE = 10;
const CLIENTS = 4;
const MB = 1_000_000;
const UPLOADED = 'pgcloud_wal_uploaded_bytes_total';

/** The value at rank p% of the values (nearest rank, as in bench:api). */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1] ?? Number.NaN;
}

function lagLines(
  samples: LagSample[],
  written: { bytes: number; seconds: number; uploaded: number },
): string[] {
  const first = samples[0];
  const last = samples.at(-1);
  const seconds = first && last ? (last.at - first.at) / 1000 : 0;
  const archived = first && last ? last.bytesReceived - first.bytesReceived : 0;
  const lagSeconds = samples.map((s) => s.lagSeconds);
  const behindMs = samples.map((s) => s.behindMs);
  return [
    `archive lag under the load, ${samples.length} samples, one a second`,
    `  receiver-status lag_seconds (whole seconds): p50 ${percentile(lagSeconds, 50)}  p99 ${percentile(lagSeconds, 99)}`,
    `  now - recovery-window to:                   p50 ${percentile(behindMs, 50).toFixed(0)} ms  p99 ${percentile(behindMs, 99).toFixed(0)} ms`,
    `  WAL archived (bytes_received): ${(archived / MB / seconds).toFixed(2)} MB/s over ${seconds.toFixed(0)} s` +
      `  (the server wrote ${(written.bytes / MB / written.seconds).toFixed(2)} MB/s over the run)`,
    `  uploaded to S3: ${(written.uploaded / MB / written.seconds).toFixed(2)} MB/s, ` +
      `${(written.uploaded / written.bytes).toFixed(2)} times the WAL written (every PUT counts, whole segments and pieces)`,
  ];
}

await runBench(async (cleanups: Cleanup[]) => {
  const bulk = await bulkDatabase(cleanups, 'bench-wal-lag', 0);
  const database = await PgbenchDatabase.of(bulk);
  console.error(`pgbench -i -s ${SCALE}`);
  await database.initialize(SCALE);
  await database.settle();
  console.error(`pgbench -c ${CLIENTS} -T ${SECONDS} -N without PITR`);
  const tpsWithout = await database.tps(CLIENTS, SECONDS);
  console.error('enabling PITR and waiting for the archive to open and catch up');
  await enablePitrAndWait(bulk.client, bulk.path, 1);
  await database.settle();
  await waitForCatchUp(bulk.client, bulk.path);
  console.error(`pgbench -c ${CLIENTS} -T ${SECONDS} -N with PITR, sampling the lag`);
  const pitrWorker = bulk.stack.managementUrl('pitr-worker');
  const uploadedBefore = plainMetric(await scrapeMetrics(pitrWorker), UPLOADED);
  const walBefore = await database.walPosition();
  const started = performance.now();
  const { samples, result: tpsWith } = await sampleDuring(
    bulk.client,
    bulk.path,
    database.tps(CLIENTS, SECONDS),
  );
  const written = {
    bytes: (await database.walPosition()) - walBefore,
    seconds: (performance.now() - started) / 1000,
    uploaded: plainMetric(await scrapeMetrics(pitrWorker), UPLOADED) - uploadedBefore,
  };
  return [
    `WAL archiving under pgbench -c ${CLIENTS} -T ${SECONDS} -N (scale ${SCALE}) over TLS`,
    ...lagLines(samples, written),
    `pgbench, the same run before enabling PITR and with it (each after VACUUM ANALYZE and CHECKPOINT)`,
    `  without PITR: ${tpsWithout.toFixed(0)} tps`,
    `  with PITR (pg_receivewal streaming, segments uploaded to S3): ${tpsWith.toFixed(0)} tps`,
    `  ratio (with / without): ${(tpsWith / tpsWithout).toFixed(2)}`,
  ].join('\n');
});
