import { CreateDatabaseDto } from '@pgcloud/contracts';
import { IsString, MaxLength } from 'class-validator';

/** databases.create as it arrives: the HTTP body's rules plus the project it goes to. */
export class CreateDatabaseMessage extends CreateDatabaseDto {
  @IsString()
  @MaxLength(64)
  project_id: string;
}
