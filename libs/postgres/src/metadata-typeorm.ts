import type { DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { MixedList } from 'typeorm';
import { ensureMetadataSchema } from './metadata-db.js';

/** What a service keeps in the metadata database. */
export interface MetadataSchemaOptions {
  databaseUrl: string;
  /** The service's own schema: nobody else reads its tables. */
  schema: string;
  entities: MixedList<new () => unknown>;
  migrations: MixedList<new () => unknown>;
}

/**
 * TypeORM on a service's own schema of the metadata database: the schema is made first,
 * migrations run at start, and the schema is never synchronized from the entities.
 */
export function metadataTypeOrmModule(options: MetadataSchemaOptions): DynamicModule {
  return TypeOrmModule.forRootAsync({
    useFactory: async () => {
      await ensureMetadataSchema(options.databaseUrl, options.schema);
      return {
        type: 'postgres',
        url: options.databaseUrl,
        schema: options.schema,
        entities: options.entities,
        migrations: options.migrations,
        migrationsRun: true,
        synchronize: false,
      };
    },
  });
}
