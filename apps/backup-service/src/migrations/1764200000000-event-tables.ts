import {
  dropInboxTableSql,
  dropOutboxTableSql,
  inboxTableSql,
  outboxTableSql,
} from '@pgcloud/messaging';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox this service publishes its events from, and the inbox that dedupes those it handles. */
export class EventTables1764200000000 implements MigrationInterface {
  name = 'EventTables1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(outboxTableSql('backups'));
    await queryRunner.query(inboxTableSql('backups'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(dropInboxTableSql('backups'));
    await queryRunner.query(dropOutboxTableSql('backups'));
  }
}
