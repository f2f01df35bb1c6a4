import { dropInboxTableSql, inboxTableSql } from '@pgcloud/messaging';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The inbox that dedupes the events this service handles (it publishes none: no outbox). */
export class EventTables1765000000001 implements MigrationInterface {
  name = 'EventTables1765000000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(inboxTableSql('notifications'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(dropInboxTableSql('notifications'));
  }
}
