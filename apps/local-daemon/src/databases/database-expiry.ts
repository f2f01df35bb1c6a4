import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError } from '@pgcloud/contracts';
import { Catalogue } from '../catalogue/catalogue.js';
import { LocalDatabasesService } from './local-databases.service.js';

/** How often, in milliseconds, the daemon drops its expired databases. */
export const EXPIRY_SWEEP_MS = Symbol('EXPIRY_SWEEP_MS');

/**
 * Drops databases whose time passed, every sweep (docs/api/local-daemon.md#expiry), and
 * temporary ones when the daemon stops; at start, temporary ones a daemon that did not
 * stop cleanly left, then the expired ones, so a restart keeps no database past its time.
 */
@Injectable()
export class DatabaseExpiry implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DatabaseExpiry.name);
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly catalogue: Catalogue,
    private readonly databases: LocalDatabasesService,
    @Inject(EXPIRY_SWEEP_MS) private readonly sweepMs: number,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.drop(await this.catalogue.temporaries(), 'temporary, left by an unclean stop');
    await this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.sweepMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
    await this.drop(await this.catalogue.temporaries(), 'temporary');
  }

  /** Drops the databases whose expiry has passed; one sweep at a time. */
  sweep(): Promise<void> {
    this.sweeping ??= this.catalogue
      .expired(new Date())
      .then((names) => this.drop(names, 'expired'))
      // Snapshots of databases dropped outside the daemon go too.
      .then(() => this.databases.dropOrphanSnapshots())
      .catch((err: unknown) => this.logger.warn(`expiry sweep failed: ${String(err)}`))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async drop(names: readonly string[], why: string): Promise<void> {
    for (const name of names) {
      const dropped = await this.databases.delete(name).then(
        () => true,
        (err: unknown) => {
          if (err instanceof DomainError && err.code === 'DATABASE_NOT_FOUND') return false;
          throw err;
        },
      );
      if (dropped) this.logger.log(`dropped ${name} (${why})`);
    }
  }
}
