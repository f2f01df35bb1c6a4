import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { IsDatabaseName } from '../databases/databases.dto.js';

/** Body of the local daemon's POST /databases (docs/api/local-daemon.md). */
export class CreateLocalDatabaseDto {
  @IsDatabaseName()
  name: string;

  /**
   * An existing local database to copy. Looked up as given, so a database made outside
   * the daemon under another kind of name can be a template too; at most 63 characters,
   * PostgreSQL's limit, and never NUL, which no name can hold.
   */
  @IsOptional()
  @IsString()
  @Length(1, 63, { message: 'template must be 1 to 63 characters long' })
  @Matches(/^[^\0]*$/, { message: 'template must not hold NUL characters' })
  template?: string;
}
