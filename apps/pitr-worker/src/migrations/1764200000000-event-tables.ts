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
    await queryRunner.query(outboxTableSql('pitr'));
    await queryRunner.query(inboxTableSql('pitr'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(dropInboxTableSql('pitr'));
    await queryRunner.query(dropOutboxTableSql('pitr'));
  }
}
