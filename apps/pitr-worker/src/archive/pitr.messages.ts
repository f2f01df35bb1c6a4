import { EnablePitrDto, PitrRestoreDto, WalPageQueryDto } from '@pgcloud/contracts';
import { IsString, MaxLength } from 'class-validator';

/** pitr.enable: the gateway's body and the database it names, checked again here. */
export class EnablePitrMessage extends EnablePitrDto {
  @IsString()
  @MaxLength(64)
  project_id: string;

  @IsString()
  @MaxLength(63)
  name: string;
}

/** pitr.wal: one page of the archive of the database it names. */
export class WalPageMessage extends WalPageQueryDto {
  @IsString()
  @MaxLength(64)
  project_id: string;

  @IsString()
  @MaxLength(63)
  name: string;
}

/** pitr.restore: the target (and target_database) for the database it names. */
export class PitrRestoreMessage extends PitrRestoreDto {
  @IsString()
  @MaxLength(64)
  project_id: string;

  @IsString()
  @MaxLength(63)
  name: string;
}
