import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { IsQueryFlag } from '../message-rules.js';

/** Project names: lowercase letters, digits and hyphens, a letter first, 3 to 50 long. */
export const PROJECT_NAME_PATTERN = /^[a-z][a-z0-9-]*$/;

/** Body of POST /projects. */
export class CreateProjectDto {
  @ApiProperty({
    description: 'Unique among the projects of the account.',
    example: 'shop-backend',
    minLength: 3,
    maxLength: 50,
    pattern: PROJECT_NAME_PATTERN.source,
  })
  @IsString()
  @Length(3, 50, { message: 'name must be 3 to 50 characters long' })
  @Matches(PROJECT_NAME_PATTERN, {
    message:
      'name may hold only lowercase letters, digits and hyphens, and must start with a letter',
  })
  name: string;

  @ApiPropertyOptional({
    description: 'A region id of GET /regions; when absent, the first region of the deployment.',
    example: 'local',
    maxLength: 63,
  })
  @IsOptional()
  @IsString()
  @MaxLength(63)
  default_region?: string;
}

/** Query of DELETE /projects/{id}. */
export class DeleteProjectQueryDto {
  @ApiPropertyOptional({
    description: 'Delete the project with its databases (else PROJECT_NOT_EMPTY).',
    type: Boolean,
    default: false,
  })
  @IsQueryFlag()
  force?: boolean;
}
