import { Gauge } from 'prom-client';

/**
 * The share of the local driver's DATA_DIR file system that is free, as the last look found
 * it (each reconcile pass and each create look); no series with the kubernetes driver,
 * whose servers have volumes of their own.
 */
export const dataDirFreeRatio = new Gauge({
  name: 'pgcloud_data_dir_free_ratio',
  help: "Free share (0-1) of the disk the local driver's servers share (DATA_DIR).",
  // A label, so that no series exists (rather than a 0) until a look has found the share.
  labelNames: ['driver'] as const,
});
