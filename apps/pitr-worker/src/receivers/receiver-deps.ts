import type { RpcClient } from '@pgcloud/messaging';
import type { OsUser } from '@pgcloud/postgres';
import type { ObjectStore } from '@pgcloud/storage';
import type { ArchiveRepository } from '../archive/archive.repository.js';
import type { ArchiveStarter } from '../archive/archive-starter.js';
import type { ReceiverLeases } from '../archive/receiver-leases.repository.js';
import type { ReceiverProgress } from '../archive/receiver-progress.repository.js';
import type { SegmentRepository } from '../archive/segment.repository.js';
import type { Clock } from '../clock.js';
import type { PrimarySessions } from './primary-session.js';
import type { ReceivewalOptions, ReceivewalProcess } from './receivewal-process.js';
import type { Spool } from './spool.js';

/** What every receiver of a replica shares; a unit spec hands in fakes of the side effects. */
export interface ReceiverDeps {
  archives: ArchiveRepository;
  leases: ReceiverLeases;
  progress: ReceiverProgress;
  segments: SegmentRepository;
  store: ObjectStore;
  rpc: RpcClient;
  starter: ArchiveStarter;
  sessions: PrimarySessions;
  spool: Spool;
  clock: Clock;
  startReceivewal: (options: ReceivewalOptions) => ReceivewalProcess;
  osUser: OsUser;
  pgBinDir: string;
  workerId: string;
  flushIntervalMs: number;
}
