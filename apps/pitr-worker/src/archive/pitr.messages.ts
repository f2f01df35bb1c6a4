import { IntersectionType } from '@nestjs/mapped-types';
import { EnablePitrDto, PitrRestoreDto, WalPageQueryDto } from '@pgcloud/contracts';
import { IsString, MaxLength } from 'class-validator';

/** The database a message names, checked again here. */
class DatabaseRefMessage {
  @IsString()
  @MaxLength(64)
  project_id: string;

  @IsString()
  @MaxLength(63)
  name: string;
}

/** pitr.enable: the gateway's body and the database it names. */
export class EnablePitrMessage extends IntersectionType(EnablePitrDto, DatabaseRefMessage) {}

/** pitr.wal: one page of the archive of the database it names. */
export class WalPageMessage extends IntersectionType(WalPageQueryDto, DatabaseRefMessage) {}

/** pitr.restore: the target (and target_database) for the database it names. */
export class PitrRestoreMessage extends IntersectionType(PitrRestoreDto, DatabaseRefMessage) {}
