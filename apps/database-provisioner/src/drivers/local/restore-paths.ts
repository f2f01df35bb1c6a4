import { join } from 'node:path';
import type { ServerPaths } from './server-paths.js';

/** Where a restore of one server keeps its work, beside the live data. */
export interface RestorePaths {
  /** The restored data being built; renamed to `pgdata` by the swap. */
  restoreDir: string;
  /** The live data, kept here from the swap until the restore is finished or undone. */
  previousDir: string;
  /** The old data on its way out: renamed here whole, then removed. */
  trashDir: string;
  /** The socket of the server that checks the restored data before the swap (a name no
   * longer than `socket`, so the socket path check at start covers it). */
  socketDir: string;
  /** WAL segments a point-in-time restore replays, fetched before recovery starts. */
  walSpoolDir: string;
  logFile: string;
}

/** Written into the restored data once it is checked: the swap may use it. */
export const CHECKED_MARKER = 'pgcloud_restore_checked';

export function restorePaths(server: ServerPaths): RestorePaths {
  return {
    restoreDir: join(server.serverDir, 'pgdata.restore'),
    previousDir: join(server.serverDir, 'pgdata.previous'),
    trashDir: join(server.serverDir, 'pgdata.trash'),
    socketDir: join(server.serverDir, 'rsock'),
    walSpoolDir: join(server.serverDir, 'wal.restore'),
    logFile: join(server.serverDir, 'restore.log'),
  };
}
