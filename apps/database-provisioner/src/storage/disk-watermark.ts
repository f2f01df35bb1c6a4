import { Injectable } from '@nestjs/common';
import { ProvisionerConfig } from '../config.js';
import { DatabaseDriver } from '../drivers/database-driver.js';
import { dataDirFreeRatio } from './storage.metrics.js';

/**
 * The deployment-wide watermark on the disk servers share (the local driver's DATA_DIR):
 * below DATA_DIR_MIN_FREE_PERCENT free, no new server is made, and the storage watch
 * fences the server furthest over its limit, one each reconcile pass.
 */
@Injectable()
export class DiskWatermark {
  constructor(
    private readonly driver: DatabaseDriver,
    private readonly config: ProvisionerConfig,
  ) {}

  /** The share of the disk that is free, when it is under the watermark; else undefined. */
  async shortOfRoom(): Promise<number | undefined> {
    const space = await this.driver.diskSpace();
    if (!space || space.totalBytes === 0) return undefined;
    dataDirFreeRatio.set({ driver: 'local' }, space.freeBytes / space.totalBytes);
    const freePercent = (100 * space.freeBytes) / space.totalBytes;
    return freePercent < this.config.DATA_DIR_MIN_FREE_PERCENT ? freePercent : undefined;
  }
}
