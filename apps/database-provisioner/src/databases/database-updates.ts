import { Injectable } from '@nestjs/common';
import type { Database, RequestContext, UpdateDatabaseRequest } from '@pgcloud/contracts';
import { DomainError } from '@pgcloud/contracts';
import { DatabaseResizes } from '../resize/database-resizes.js';
import { DatabasesRepository } from './databases.repository.js';
import { DatabasesService } from './databases.service.js';
import { toDatabase } from './database-view.js';
import { assertExpiryWithinTier, requestedExpiry } from './expiry.js';

/**
 * PATCH of a database (docs/api/databases.md#changing-a-database): `config` resizes it
 * (resize/), `expires_at` moves its expiry or null clears it. Everything is checked before
 * anything changes: VALIDATION_ERROR, QUOTA_EXCEEDED, then what its state allows.
 */
@Injectable()
export class DatabaseUpdates {
  constructor(
    private readonly databases: DatabasesService,
    private readonly records: DatabasesRepository,
    private readonly resizes: DatabaseResizes,
  ) {}

  async update(ctx: RequestContext, request: UpdateDatabaseRequest): Promise<Database> {
    if (request.expires_at === undefined && request.config === undefined)
      throw new DomainError('VALIDATION_ERROR', 'The request is not valid.', [
        {
          field: 'body',
          message: 'give config, expires_at (a timestamp, or null for never), or both',
        },
      ]);
    const now = Date.now();
    const expiresAt =
      request.expires_at === undefined ? undefined : requestedExpiry(request.expires_at, now);
    const record = await this.databases.findOwned(ctx, request);
    if (expiresAt !== undefined) assertExpiryWithinTier(ctx.tier, expiresAt, now);
    const config = request.config && (await this.resizes.check(ctx, record, request.config));
    if (config) await this.resizes.start(ctx, record, config, expiresAt);
    else if (expiresAt !== undefined && !(await this.records.setExpiry(record.id, expiresAt)))
      throw new DomainError('DATABASE_NOT_FOUND', `Database ${request.name} was not found.`);
    return toDatabase(await this.records.get(record.id));
  }
}
