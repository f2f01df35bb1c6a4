import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional } from 'class-validator';

/** Query of the restore POSTs (spec/decisions.md section 6). */
export class DryRunQueryDto {
  @ApiPropertyOptional({
    description:
      'Answer 200 with the plan (base backup, WAL, target, an estimate) after every check the restore would pass, and create nothing.',
    type: Boolean,
    default: false,
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  )
  @IsBoolean({ message: 'dry_run must be true or false' })
  dry_run?: boolean;
}
