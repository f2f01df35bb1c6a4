import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsQueryFlag } from '../message-rules.js';

/** Query of the restore POSTs. */
export class DryRunQueryDto {
  @ApiPropertyOptional({
    description:
      'Answer 200 with the plan (base backup, WAL, target, an estimate) after every check the restore would pass, and create nothing.',
    type: Boolean,
    default: false,
  })
  @IsQueryFlag()
  dry_run?: boolean;
}
